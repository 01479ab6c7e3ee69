// An optional value kept on the heap: one pointer in its holder, for a value
// that nearly every holder lacks. A step's error is one (std::optional<Error>
// is 176 bytes, and an apply of 512 interfaces holds 4,608 steps, nearly all
// without one). Copies are deep; the interface is the part of
// std::optional's that its users need.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace nictune {

template <class T>
class Boxed {
  public:
    Boxed() = default;
    Boxed(std::nullopt_t) {}  // the constructors are implicit, as std::optional's
    Boxed(T v) : p_(std::make_unique<T>(std::move(v))) {}
    Boxed(const std::optional<T>& v) : p_(v ? std::make_unique<T>(*v) : nullptr) {}
    Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
    Boxed(Boxed&&) noexcept = default;
    Boxed& operator=(const Boxed& o) {
        if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
        return *this;
    }
    Boxed& operator=(Boxed&&) noexcept = default;
    ~Boxed() = default;

    [[nodiscard]] bool has_value() const { return p_ != nullptr; }
    explicit operator bool() const { return has_value(); }
    T& operator*() { return *p_; }
    const T& operator*() const { return *p_; }
    T* operator->() { return p_.get(); }
    const T* operator->() const { return p_.get(); }
    void reset() { p_.reset(); }

  private:
    std::unique_ptr<T> p_;
};

}  // namespace nictune
