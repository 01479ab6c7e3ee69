// Netlink attribute iteration for C++, one walker for ethtool's generic
// netlink and for rtnetlink. libmnl's mnl_attr_for_each* macros assign void*
// to a typed pointer and do not compile as C++; this wrapper walks the same
// layout with libmnl's own bounds check (mnl_attr_ok) and also tells whether
// the walk reached the end, so that a decoder can tell a truncated message
// from a complete one (checked() turns that into the error decoders return).
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace nictune::netlink {

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

// The list itself when it is complete(), else Errc::Internal in `context`:
// "WHAT is truncated (an attribute runs past its end)". Decoders check a list
// once, then iterate it knowing that every attribute lies inside.
inline Result<AttrList> checked(AttrList list, std::string_view context, std::string_view what) {
    if (list.complete()) return list;
    return fail(Errc::Internal, std::string(context),
                std::string(what) + " is truncated (an attribute runs past its end)");
}

// A message of one of `types` (nullptr or any other type is an error), its
// fixed header (ifinfomsg, rtmsg, ...) copied into `fixed`, and the
// attributes after it, checked(); "truncated NAME" when the message cannot
// hold the header.
template <class T>
Result<AttrList> fixed_header(const nlmsghdr* nlh, std::initializer_list<uint16_t> types, T& fixed,
                              std::string_view context, std::string_view name) {
    if (nlh == nullptr) return fail(Errc::Internal, std::string(context), "no message");
    if (std::find(types.begin(), types.end(), nlh->nlmsg_type) == types.end())
        return fail(Errc::Internal, std::string(context),
                    "unexpected message type " + std::to_string(nlh->nlmsg_type));
    if (nlh->nlmsg_len < NLMSG_SPACE(sizeof(T)))
        return fail(Errc::Internal, std::string(context), "truncated " + std::string(name));
    std::memcpy(&fixed, NLMSG_DATA(nlh), sizeof(T));
    return checked(AttrList::of(nlh, NLMSG_ALIGN(sizeof(T))), context, "attribute list");
}

// Starts a request in `buf` (aligned for nlmsghdr): its header and a zeroed
// fixed header T (genlmsghdr, ifinfomsg, ...) to fill in.
template <class T>
T* start_message(void* buf, uint16_t type, uint16_t flags, nlmsghdr** nlh) {
    *nlh = mnl_nlmsg_put_header(buf);
    (*nlh)->nlmsg_type = type;
    (*nlh)->nlmsg_flags = flags;
    return static_cast<T*>(mnl_nlmsg_put_extra_header(*nlh, sizeof(T)));
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

// rtnetlink's readers are lenient where ethtool's are strict: a value is its
// first sizeof(T) bytes (nullopt if there are fewer), and a string stops at
// its first NUL or at the attribute's end.
template <class T>
std::optional<T> attr_get_prefix(const nlattr* a) {
    if (mnl_attr_get_payload_len(a) < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, mnl_attr_get_payload(a), sizeof(T));
    return v;
}

inline std::string_view attr_text(const nlattr* a) {
    const char* p = static_cast<const char*>(mnl_attr_get_payload(a));
    return {p, strnlen(p, mnl_attr_get_payload_len(a))};
}

// The payload as bytes (addresses, structs).
inline std::span<const uint8_t> attr_bytes(const nlattr* a) {
    return {static_cast<const uint8_t*>(mnl_attr_get_payload(a)), mnl_attr_get_payload_len(a)};
}

}  // namespace nictune::netlink
