#include "core/models/json_p.h"

#include "core/models/safetensors.h"

#include <set>
#include <vector>

namespace attn::models::detail {

namespace {

// Thrown from inside the parser callback; turned into ModelError once the parser unwound.
struct JsonRefusal
{
    std::string message;
};

} // namespace

nlohmann::json parseJsonStrict(std::string_view text, const std::string &what)
{
    using nlohmann::json;
    // Keys seen so far in each open object, innermost last.
    std::vector<std::set<std::string>> openObjects;
    const json::parser_callback_t callback
        = [&](int depth, json::parse_event_t event, json &parsed) -> bool {
        if (depth > kMaxJsonDepth)
            throw JsonRefusal {"nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels"};
        switch (event) {
        case json::parse_event_t::object_start:
            openObjects.emplace_back();
            break;
        case json::parse_event_t::object_end:
            if (!openObjects.empty())
                openObjects.pop_back();
            break;
        case json::parse_event_t::key:
            if (!openObjects.empty() && parsed.is_string()) {
                const std::string &key = parsed.get_ref<const std::string &>();
                if (!openObjects.back().insert(key).second)
                    throw JsonRefusal {"duplicate key \"" + key + "\""};
            }
            break;
        default:
            break;
        }
        return true;
    };
    try {
        return json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                           /*ignore_comments=*/false);
    } catch (const JsonRefusal &r) {
        throw ModelError(what + ": " + r.message);
    } catch (const json::exception &e) {
        throw ModelError(what + ": not valid JSON (" + e.what() + ")");
    }
}

const char *jsonTypeName(const nlohmann::json &value)
{
    if (value.is_object())
        return "object";
    if (value.is_array())
        return "array";
    if (value.is_string())
        return "string";
    if (value.is_number())
        return "number";
    if (value.is_boolean())
        return "boolean";
    if (value.is_null())
        return "null";
    return "binary";
}

} // namespace attn::models::detail
