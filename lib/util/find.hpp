// The look-up of nictune's tables (schema rows, driver rules, families,
// aliases): the first item a predicate accepts, or nullptr, for the static
// tables and the vectors whose items outlive the pointer.
#pragma once

#include <algorithm>
#include <ranges>

namespace nictune {

template <std::ranges::forward_range Range, class Pred>
auto find_first(const Range& items, Pred pred) -> decltype(&*std::ranges::begin(items)) {
    auto it = std::ranges::find_if(items, pred);
    return it == std::ranges::end(items) ? nullptr : &*it;
}

}  // namespace nictune
