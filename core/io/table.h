#pragma once
// A small result table (named columns, rows of numbers or text) with text, CSV and JSON
// writers. Numbers print as the shortest decimal that round-trips (like Python's repr), so a
// value equal to NumPy's prints the same digits.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace attn {

class Table
{
public:
    using Cell = std::variant<double, std::int64_t, std::string>;

    Table() = default;
    explicit Table(std::vector<std::string> columns);

    const std::vector<std::string> &columns() const { return m_columns; }
    const std::vector<std::vector<Cell>> &rows() const { return m_rows; }
    std::size_t rowCount() const { return m_rows.size(); }
    std::size_t columnCount() const { return m_columns.size(); }

    /// Appends a row; throws std::invalid_argument when its size differs from the columns.
    void addRow(std::vector<Cell> row);
    /// Index of a column; throws std::out_of_range naming the column and the existing ones.
    std::size_t columnIndex(std::string_view name) const;
    /// Numeric value (int64 converted) of a cell; throws std::invalid_argument on text.
    double number(std::size_t row, std::string_view column) const;
    const Cell &cell(std::size_t row, std::size_t column) const { return m_rows[row][column]; }

    /// Free-text notes printed under the table (what the numbers mean, caveats).
    std::vector<std::string> notes;

    /// Aligned plain-text table with a header line, a rule and the notes as "# " lines.
    std::string toText() const;
    /// CSV with a header line: RFC 4180 quoting, "\n" line ends, numbers as formatNumber,
    /// no notes (so the text equals what a NumPy script printing repr() values writes).
    std::string toCsv() const;
    /// {"id": id, "params": {...}, "columns": [...], "rows": [{col: value, ...}, ...],
    ///  "non_finite": [{"row", "column", "value"}], "notes": [...]}.
    /// Numbers print as formatNumber (valid JSON); NaN/Inf become null and are listed in
    /// "non_finite" with their text ("nan", "inf", "-inf") so nothing is lost. A parameter value
    /// that is a JSON number stays a number, a comma list of numbers becomes an array, anything
    /// else a string.
    std::string toJson(std::string_view id, const std::map<std::string, std::string> &params) const;
    /// The same plus "scalars": {name: value} (headline numbers of an experiment) after "notes";
    /// a non-finite scalar is null there and listed in "non_finite" as {"scalar", "value"}.
    std::string toJson(std::string_view id, const std::map<std::string, std::string> &params,
                       const std::map<std::string, double> &scalars) const;

    /// Shortest round-trip decimal laid out exactly like Python's repr(float): "1.0", "0.0001",
    /// "1e-05", "1e+16", "-0.0"; "nan", "inf", "-inf" for non-finite values.
    static std::string formatNumber(double v);
    static std::string formatCell(const Cell &c);

private:
    std::vector<std::string> m_columns;
    std::vector<std::vector<Cell>> m_rows;
};

} // namespace attn
