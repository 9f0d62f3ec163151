// The translation unit of attn_qt_pch, which only builds the precompiled headers that the ui/
// tiers, the executable and the tests reuse (cmake/AttnPch.cmake).
