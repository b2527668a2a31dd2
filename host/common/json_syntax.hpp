// Where a JSON text first breaks the grammar (RFC 8259), for messages: simdjson's DOM parser says
// what kind of error it met but not where. Only called once a parse has failed, so it favours
// plainness over speed; it keeps an explicit stack, so nesting depth costs heap, not the call
// stack.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lumos::common {

// The byte offset of the first character that cannot continue a JSON document (the end of the
// text, for one cut short), or nothing when the whole text is one valid document.
std::optional<size_t> json_syntax_error_offset(std::string_view text);

// "line L, column C (byte B)" of `offset` in `text`, 1-based lines and columns in bytes.
std::string text_position(std::string_view text, size_t offset);

// ": line L, column C (byte B)" of the first syntax error, or "" where the validator finds none
// (a document simdjson refuses for another reason: depth, a number out of range, bad UTF-8).
std::string json_error_position(std::string_view text);

}  // namespace lumos::common
