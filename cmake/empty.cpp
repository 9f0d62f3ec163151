// An empty source: the attncore of the tsan preset, which links a Release build's library
// (core/CMakeLists.txt, ATTN_TSAN_CORE).
