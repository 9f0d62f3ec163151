#pragma once
// Strict JSON parsing for checkpoint headers, config.json and index files (internal to
// core/models; nlohmann/json is linked privately to attncore).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace attn::models::detail {

/// Deepest nesting accepted: configs and headers need a handful of levels.
inline constexpr int kMaxJsonDepth = 64;

/// Parses `text` as one JSON value (RFC 8259, UTF-8; whitespace around it only). Unlike
/// nlohmann's default, which keeps one of two equal keys silently, a key repeated in an object
/// is an error naming it. Throws ModelError "<what>: …" on a syntax error (with nlohmann's byte
/// position), a duplicate key or nesting deeper than kMaxJsonDepth.
nlohmann::json parseJsonStrict(std::string_view text, const std::string &what);

/// "object", "array", "string", "number", "boolean" or "null".
const char *jsonTypeName(const nlohmann::json &value);

} // namespace attn::models::detail
