#pragma once
// The one exception type of core/text: a tokenizer's files or configuration could not be used.

#include <stdexcept>
#include <string>

namespace attn::text {

/// Thrown by the loaders (loader.h) and the stages' factories for unreadable or malformed
/// files and unsupported configurations. what() names the file and, where there is one, the
/// JSON field: "tokenizer.json: model.merges[3]: token \"xy\" is not in the vocabulary".
class TokenizerError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace attn::text
