#include "core/io/regularfile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn {

std::string fileKindText(unsigned mode)
{
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    return "not a regular file";
}

int openRegularFile(const std::string &path, std::uintmax_t &size, std::string &error)
{
    // O_NONBLOCK: open() on a FIFO with no writer returns at once instead of waiting.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        error = std::string("cannot open (") + std::strerror(errno) + ")";
        return -1;
    }
    struct stat st
    {
    };
    if (::fstat(fd, &st) != 0) {
        error = std::string("cannot read (") + std::strerror(errno) + ")";
        ::close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        const std::string kind = fileKindText(unsigned(st.st_mode));
        error = kind == "not a regular file" ? kind : "not a regular file (" + kind + ")";
        ::close(fd);
        return -1;
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    size = std::uintmax_t(st.st_size);
    return fd;
}

std::string readRegularFile(const std::string &path, std::uintmax_t limit, std::string &text)
{
    std::uintmax_t size = 0;
    std::string error;
    const int fd = openRegularFile(path, size, error);
    if (fd < 0)
        return error;
    if (size > limit) {
        ::close(fd);
        return std::to_string(size) + " bytes, more than the " + std::to_string(limit)
            + " accepted";
    }
    text.assign(std::size_t(size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            error = std::string("cannot read (") + std::strerror(errno) + ")";
            ::close(fd);
            return error;
        }
        if (n == 0)
            break;
        done += std::size_t(n);
    }
    ::close(fd);
    if (done != text.size())
        return "the file changed while reading (" + std::to_string(done) + " of "
            + std::to_string(size) + " bytes)";
    return {};
}

} // namespace attn
