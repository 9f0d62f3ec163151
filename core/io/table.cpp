#include "core/io/table.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <system_error>

namespace attn {

namespace {

/// Width of a UTF-8 string in code points (good enough to align ASCII and "√", "×", "−").
std::size_t displayWidth(std::string_view s)
{
    std::size_t w = 0;
    for (const char c : s) {
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
            ++w;
    }
    return w;
}

std::string csvField(const std::string &s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string jsonString(std::string_view s)
{
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                out += buf;
            } else {
                out += c; // UTF-8 passes through
            }
        }
    }
    out += '"';
    return out;
}

/// True when `s` is a number in JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool isJsonNumber(std::string_view s)
{
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            ++i;
        return i - start;
    };
    if (i < s.size() && s[i] == '-')
        ++i;
    if (i < s.size() && s[i] == '0') {
        ++i;
    } else if (digits() == 0) {
        return false;
    }
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (digits() == 0)
            return false;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            ++i;
        if (digits() == 0)
            return false;
    }
    return i == s.size();
}

/// A parameter value as JSON: a number stays a number, a comma list of numbers becomes an
/// array, anything else a string.
std::string jsonParamValue(const std::string &value)
{
    if (isJsonNumber(value))
        return value;
    if (value.find(',') != std::string::npos) {
        std::string out = "[";
        std::size_t start = 0;
        while (true) {
            const std::size_t comma = value.find(',', start);
            const std::string part = value.substr(
                start, comma == std::string::npos ? std::string::npos : comma - start);
            if (!isJsonNumber(part))
                return jsonString(value);
            if (start > 0)
                out += ", ";
            out += part;
            if (comma == std::string::npos)
                break;
            start = comma + 1;
        }
        return out + "]";
    }
    return jsonString(value);
}

} // namespace

Table::Table(std::vector<std::string> columns)
    : m_columns(std::move(columns))
{ }

void Table::addRow(std::vector<Cell> row)
{
    if (row.size() != m_columns.size()) {
        std::string names;
        for (const std::string &c : m_columns)
            names += (names.empty() ? "" : ", ") + c;
        throw std::invalid_argument("Table::addRow: the row has " + std::to_string(row.size())
                                    + " cells but the table has " + std::to_string(m_columns.size())
                                    + " columns (" + names + ")");
    }
    m_rows.push_back(std::move(row));
}

std::size_t Table::columnIndex(std::string_view name) const
{
    for (std::size_t i = 0; i < m_columns.size(); ++i) {
        if (m_columns[i] == name)
            return i;
    }
    std::string names;
    for (const std::string &c : m_columns)
        names += (names.empty() ? "" : ", ") + c;
    throw std::out_of_range("Table: no column '" + std::string(name) + "' (columns: " + names
                            + ")");
}

double Table::number(std::size_t row, std::string_view column) const
{
    if (row >= m_rows.size())
        throw std::out_of_range("Table: row " + std::to_string(row)
                                + " out of range (the table has " + std::to_string(m_rows.size())
                                + " rows)");
    const Cell &c = m_rows[row][columnIndex(column)];
    if (const double *d = std::get_if<double>(&c))
        return *d;
    if (const std::int64_t *i = std::get_if<std::int64_t>(&c))
        return double(*i);
    throw std::invalid_argument("Table: cell (" + std::to_string(row) + ", " + std::string(column)
                                + ") holds text '" + std::get<std::string>(c) + "', not a number");
}

std::string Table::formatNumber(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    // Shortest round-trip digits in scientific form, e.g. "-1.2345e-05" (std::to_chars, C++17).
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    if (ec != std::errc())
        throw std::runtime_error("Table::formatNumber: to_chars failed");
    const std::string_view sci(buf, std::size_t(end - buf));
    const std::size_t ePos = sci.find('e');
    const bool negative = sci.front() == '-';
    std::string digits;
    for (std::size_t i = negative ? 1 : 0; i < ePos; ++i) {
        if (sci[i] != '.')
            digits += sci[i];
    }
    int exponent = 0;
    std::from_chars(sci.data() + ePos + (sci[ePos + 1] == '+' ? 2 : 1), sci.data() + sci.size(),
                    exponent);
    // Python's float repr (format_float_short, mode 'r'): the value is 0.DIGITS × 10^decpt;
    // scientific when decpt <= -4 or decpt > 16, else fixed with at least one digit after the
    // point ("1.0").
    const int decpt = exponent + 1;
    if (decpt <= -4 || decpt > 16)
        return std::string(sci); // to_chars already writes "1e-05", "1.5e+16" like Python
    std::string out = negative ? "-" : "";
    const int nd = int(digits.size());
    if (decpt <= 0) {
        out += "0." + std::string(std::size_t(-decpt), '0') + digits;
    } else if (decpt < nd) {
        out += digits.substr(0, std::size_t(decpt)) + "." + digits.substr(std::size_t(decpt));
    } else {
        out += digits + std::string(std::size_t(decpt - nd), '0') + ".0";
    }
    return out;
}

std::string Table::formatCell(const Cell &c)
{
    if (const double *d = std::get_if<double>(&c))
        return formatNumber(*d);
    if (const std::int64_t *i = std::get_if<std::int64_t>(&c))
        return std::to_string(*i);
    return std::get<std::string>(c);
}

std::string Table::toText() const
{
    const std::size_t nc = m_columns.size();
    std::vector<std::vector<std::string>> cells(m_rows.size());
    std::vector<std::size_t> width(nc);
    for (std::size_t j = 0; j < nc; ++j)
        width[j] = displayWidth(m_columns[j]);
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        cells[i].reserve(nc);
        for (std::size_t j = 0; j < nc; ++j) {
            cells[i].push_back(formatCell(m_rows[i][j]));
            width[j] = std::max(width[j], displayWidth(cells[i][j]));
        }
    }
    // Text columns are left-aligned, numeric ones right-aligned; two spaces between columns.
    std::vector<bool> isText(nc, false);
    for (std::size_t j = 0; j < nc; ++j) {
        for (const auto &row : m_rows) {
            if (std::holds_alternative<std::string>(row[j]))
                isText[j] = true;
        }
    }
    const auto pad = [](const std::string &s, std::size_t w, bool left) {
        const std::string fill(w - displayWidth(s), ' ');
        return left ? s + fill : fill + s;
    };
    std::string out;
    const auto line = [&](const std::vector<std::string> &values) {
        std::string l;
        for (std::size_t j = 0; j < nc; ++j) {
            if (j > 0)
                l += "  ";
            l += pad(values[j], width[j], isText[j]);
        }
        while (!l.empty() && l.back() == ' ')
            l.pop_back();
        out += l + "\n";
    };
    line(m_columns);
    std::vector<std::string> rule(nc);
    for (std::size_t j = 0; j < nc; ++j)
        rule[j] = std::string(width[j], '-');
    line(rule);
    for (const auto &row : cells)
        line(row);
    if (!notes.empty()) {
        out += "\n";
        for (const std::string &n : notes)
            out += "# " + n + "\n";
    }
    return out;
}

std::string Table::toCsv() const
{
    std::string out;
    for (std::size_t j = 0; j < m_columns.size(); ++j) {
        if (j)
            out += ',';
        out += csvField(m_columns[j]);
    }
    out += '\n';
    for (const auto &row : m_rows) {
        for (std::size_t j = 0; j < row.size(); ++j) {
            if (j)
                out += ',';
            out += csvField(formatCell(row[j]));
        }
        out += '\n';
    }
    return out;
}

std::string Table::toJson(std::string_view id,
                          const std::map<std::string, std::string> &params) const
{
    return toJson(id, params, {});
}

std::string Table::toJson(std::string_view id, const std::map<std::string, std::string> &params,
                          const std::map<std::string, double> &scalars) const
{
    std::string out = "{\n  \"id\": " + jsonString(id) + ",\n  \"params\": {";
    bool first = true;
    for (const auto &[name, value] : params) {
        out += (first ? "" : ", ") + jsonString(name) + ": " + jsonParamValue(value);
        first = false;
    }
    out += "},\n  \"columns\": [";
    for (std::size_t j = 0; j < m_columns.size(); ++j)
        out += (j ? ", " : "") + jsonString(m_columns[j]);
    out += "],\n  \"rows\": [";
    std::string nonFinite;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        out += i ? ",\n    {" : "\n    {";
        for (std::size_t j = 0; j < m_columns.size(); ++j) {
            out += (j ? ", " : "") + jsonString(m_columns[j]) + ": ";
            const Cell &c = m_rows[i][j];
            if (const double *d = std::get_if<double>(&c); d && !std::isfinite(*d)) {
                out += "null";
                nonFinite += std::string(nonFinite.empty() ? "\n    " : ",\n    ")
                    + "{\"row\": " + std::to_string(i) + ", \"column\": " + jsonString(m_columns[j])
                    + ", \"value\": " + jsonString(formatNumber(*d)) + "}";
            } else if (std::holds_alternative<std::string>(c)) {
                out += jsonString(std::get<std::string>(c));
            } else {
                out += formatCell(c);
            }
        }
        out += "}";
    }
    out += m_rows.empty() ? "]" : "\n  ]";
    std::string scalarText;
    for (const auto &[name, value] : scalars) {
        scalarText += (scalarText.empty() ? "" : ", ") + jsonString(name) + ": ";
        if (std::isfinite(value)) {
            scalarText += formatNumber(value);
        } else {
            scalarText += "null";
            nonFinite += std::string(nonFinite.empty() ? "\n    " : ",\n    ") + "{\"scalar\": "
                + jsonString(name) + ", \"value\": " + jsonString(formatNumber(value)) + "}";
        }
    }
    out += ",\n  \"non_finite\": [" + nonFinite + (nonFinite.empty() ? "]" : "\n  ]");
    out += ",\n  \"notes\": [";
    for (std::size_t k = 0; k < notes.size(); ++k)
        out += (k ? ", " : "") + jsonString(notes[k]);
    out += "]";
    if (!scalars.empty())
        out += ",\n  \"scalars\": {" + scalarText + "}";
    out += "\n}\n";
    return out;
}

} // namespace attn
