// Netlink attribute iteration for C++. libmnl's mnl_attr_for_each* macros
// assign void* to a typed pointer and do not compile as C++; this wrapper
// walks the same layout with libmnl's own bounds check (mnl_attr_ok) and
// also tells whether the walk reached the end, so that a decoder can tell a
// truncated message from a complete one.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>

namespace nictune::ethnl {

// The attributes laid out back to back in [data, data + len).
class AttrList {
  public:
    AttrList(const void* data, std::size_t len)
        : begin_(static_cast<const char*>(data)), end_(begin_ + len) {}

    // The attributes of a message's payload after `offset` bytes of fixed
    // header (GENL_HDRLEN for generic netlink). Empty if the payload is shorter.
    static AttrList of(const nlmsghdr* nlh, std::size_t offset) {
        const char* base = static_cast<const char*>(mnl_nlmsg_get_payload(nlh));
        if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN) return {base, 0};
        const std::size_t payload = mnl_nlmsg_get_payload_len(nlh);
        if (payload < offset) return {base, 0};
        return {base + offset, payload - offset};
    }

    // The attributes inside a nest.
    static AttrList nested(const nlattr* nest) {
        return {mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest)};
    }

    class iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = const nlattr*;
        using difference_type = std::ptrdiff_t;
        using pointer = const nlattr* const*;
        using reference = const nlattr*;

        iterator() = default;
        iterator(const char* at, const char* end) : at_(at), end_(end) { settle(); }
        const nlattr* operator*() const { return attr(); }
        iterator& operator++() {
            at_ = reinterpret_cast<const char*>(mnl_attr_next(attr()));
            settle();
            return *this;
        }
        iterator operator++(int) {
            iterator old = *this;
            ++*this;
            return old;
        }
        bool operator==(const iterator& o) const { return at_ == o.at_; }

      private:
        [[nodiscard]] const nlattr* attr() const { return reinterpret_cast<const nlattr*>(at_); }
        // An attribute whose header or length does not fit ends the walk.
        void settle() {
            if (at_ == nullptr) return;
            const std::ptrdiff_t left = end_ - at_;
            if (left <= 0 || !mnl_attr_ok(attr(), static_cast<int>(left))) at_ = nullptr;
        }
        const char* at_ = nullptr;
        const char* end_ = nullptr;
    };

    [[nodiscard]] iterator begin() const { return {begin_, end_}; }
    [[nodiscard]] iterator end() const { return {}; }

    // True when the attributes fill the range exactly. False means the last
    // attribute claims more bytes than there are, or bytes are left over
    // that cannot hold an attribute: the message was cut short or is corrupt.
    [[nodiscard]] bool complete() const {
        const char* at = begin_;
        while (end_ - at > 0 &&
               mnl_attr_ok(reinterpret_cast<const nlattr*>(at), static_cast<int>(end_ - at)))
            at = reinterpret_cast<const char*>(mnl_attr_next(reinterpret_cast<const nlattr*>(at)));
        // The last attribute's padding may run past an unpadded end.
        return end_ - at <= 0;
    }

    // The first attribute of type `type`, or nullptr.
    [[nodiscard]] const nlattr* find(uint16_t type) const {
        for (const nlattr* a : *this)
            if (mnl_attr_get_type(a) == type) return a;
        return nullptr;
    }

  private:
    const char* begin_;
    const char* end_;
};

// Attribute type without the NLA_F_NESTED / NLA_F_NET_BYTEORDER bits.
inline uint16_t attr_type(const nlattr* a) {
    return mnl_attr_get_type(a);
}

inline uint16_t attr_len(const nlattr* a) {
    return mnl_attr_get_payload_len(a);
}

// Fixed-width values: nullopt unless the payload has exactly sizeof(T) bytes
// (the kernel never pads or shortens them; anything else is corrupt).
template <class T>
std::optional<T> attr_get(const nlattr* a) {
    if (mnl_attr_get_payload_len(a) != sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, mnl_attr_get_payload(a), sizeof(T));
    return v;
}

// A NUL-terminated string attribute; nullopt if no NUL lies inside it.
inline std::optional<std::string_view> attr_str(const nlattr* a) {
    const char* p = static_cast<const char*>(mnl_attr_get_payload(a));
    const std::size_t len = mnl_attr_get_payload_len(a);
    const void* nul = std::memchr(p, '\0', len);
    if (nul == nullptr) return std::nullopt;
    return std::string_view(p, static_cast<std::size_t>(static_cast<const char*>(nul) - p));
}

}  // namespace nictune::ethnl
