// One owner type for every file descriptor nictune opens (as systemd's
// _cleanup_close_): it closes on destruction, moves and never copies, so no
// exit path can leak a descriptor or close one twice.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace nictune {

class UniqueFd {
  public:
    UniqueFd() = default;
    // Takes ownership; -1 (a failed open()) is an empty owner.
    explicit UniqueFd(int fd) noexcept : fd_(fd < 0 ? -1 : fd) {}
    UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    [[nodiscard]] int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    // Gives the descriptor up without closing it.
    [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
    // Closes the one held (errno is kept: a caller may be about to report
    // the failure that made it give up) and takes `fd`.
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) {
            const int saved = errno;
            ::close(fd_);
            errno = saved;
        }
        fd_ = fd < 0 ? -1 : fd;
    }
    // close() for a caller that needs its answer (a delayed write error on
    // some file systems): 0 or the errno. The descriptor is gone either way.
    int close() noexcept {
        if (fd_ < 0) return 0;
        const int rc = ::close(std::exchange(fd_, -1));
        return rc == 0 ? 0 : errno;
    }

  private:
    int fd_ = -1;
};

}  // namespace nictune
