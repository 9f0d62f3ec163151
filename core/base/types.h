#pragma once
// Common matrix types of attncore. Every matrix is row-major (C order), like NumPy's default,
// so a row of Q, K, V, scores or weights is contiguous in memory.

#include <Eigen/Core>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace attn {

template<typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template<typename T> using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template<typename T> using RowVector = Eigen::Matrix<T, 1, Eigen::Dynamic>;

/// Views of a row-major matrix (rows × cols) with any row stride: Eigen::Ref<const Matrix<T>>
/// and Eigen::Ref<Matrix<T>> with their stride written out. Function templates take these
/// rather than Eigen::Ref<…> with the default stride: that default is a dependent expression
/// which clang 14 mangles after whichever of the const and writable forms a translation unit
/// declares first, so a caller and the definition could disagree on the symbol's name.
template<typename T> using ConstMatrixRef = Eigen::Ref<const Matrix<T>, 0, Eigen::OuterStride<>>;
template<typename T> using MatrixRef = Eigen::Ref<Matrix<T>, 0, Eigen::OuterStride<>>;

using MatrixD = Matrix<double>;
using MatrixF = Matrix<float>;
using VectorD = Vector<double>;
using VectorF = Vector<float>;
/// Boolean matrix stored as bytes (0 / 1), row-major.
using MatrixB = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

using Index = Eigen::Index;

/// Thrown for inputs that violate a documented precondition (wrong shape, h not dividing
/// d_model, unknown option, ...). The message names the argument and the values involved.
class InvalidArgument : public std::invalid_argument
{
public:
    using std::invalid_argument::invalid_argument;
};

/// Thrown when inputs contain NaN or ±Inf where finite numbers are required.
class NonFiniteInput : public std::domain_error
{
public:
    using std::domain_error::domain_error;
};

/// Thrown by long computations when their cancellation flag was raised.
class Cancelled : public std::runtime_error
{
public:
    Cancelled()
        : std::runtime_error("cancelled")
    { }
};

/// "rows×cols" for error messages.
inline std::string shapeString(Index rows, Index cols)
{
    return std::to_string(rows) + "\u00d7" + std::to_string(cols);
}

} // namespace attn
