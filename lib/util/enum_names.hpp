// The text names of an enum's values (the words of the JSON reports:
// "rolled_back", "out_of_range") as one table per enum, indexed by the
// value, instead of a switch per enum. The table is held to the enum at
// compile time, as -Wswitch held the switch: one name per value, no more
// and no fewer, so a value added to the enum without its name does not
// compile. For scoped enums whose values are 0, 1, 2, ... in order; the
// names are written in that order.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace nictune {
namespace detail {

// Whether V is a value its enum names. g++ and clang write a named value
// into __PRETTY_FUNCTION__ by its name ("V = nictune::Severity::Warn") and
// any other by a cast ("V = (nictune::Severity)3").
template <auto V>
constexpr bool names_value() {
    const std::string_view f = __PRETTY_FUNCTION__;
    const auto at = f.find("V = ");
    return at != std::string_view::npos && f[at + 4] != '(';
}

template <class E, std::size_t... I>
constexpr std::size_t count_named(std::index_sequence<I...>) {
    const bool named[] = {names_value<static_cast<E>(I)>()...};
    std::size_t n = 0;
    while (n < sizeof...(I) && named[n])
        ++n;
    return n;
}

}  // namespace detail

// How many values E names: 0, 1, 2, ... up to the first it does not name.
// Up to 64: no list of names is longer. (Every value of a scoped enum's
// underlying type is a valid value, so the casts above are constant.)
template <class E>
requires std::is_scoped_enum_v<E>
inline constexpr std::size_t enum_count = detail::count_named<E>(std::make_index_sequence<64>{});

template <class E>
requires std::is_scoped_enum_v<E>
class EnumNames {
  public:
    template <class... Names>
    consteval EnumNames(Names... names) : names_{names...} {
        static_assert(sizeof...(Names) == enum_count<E>,
                      "one name for each value of the enum, in the enum's order");
    }

    // A value the enum does not name (only a cast makes one) reads "?".
    constexpr const char* operator[](E e) const {
        const auto i = static_cast<std::size_t>(e);
        return i < names_.size() ? names_[i] : "?";
    }

  private:
    std::array<const char*, enum_count<E>> names_;
};

}  // namespace nictune
