// What a tracked interface holds after nictune's last apply (its baseline,
// see watcher.hpp): the values drift is measured against. Immutable and
// shared: the interfaces of one binding mostly hold the same values (512
// veths or VFs of one profile, each with the same MTU, rings and channels),
// and the pool hands them one block instead of one each.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/value.hpp"

namespace nictune::watch {

// A setting path ("link.mtu") shared by every tracked interface: a daemon
// with thousands of bound interfaces keeps one copy of each path. The pool
// holds the paths the profiles name, so it stays small.
const std::string* setting_key(std::string_view path);

// One value of a baseline.
struct BaselineValue {
    const std::string* key;  // from setting_key()
    Scalar value;
    bool operator==(const BaselineValue&) const = default;
};

class Baseline {
  public:
    using Values = std::vector<BaselineValue>;

    Baseline() = default;

    [[nodiscard]] const Values& values() const;
    [[nodiscard]] bool empty() const { return !values_ || values_->empty(); }
    [[nodiscard]] std::size_t size() const { return values_ ? values_->size() : 0; }
    [[nodiscard]] Values::const_iterator begin() const { return values().begin(); }
    [[nodiscard]] Values::const_iterator end() const { return values().end(); }
    const BaselineValue& operator[](std::size_t i) const { return values()[i]; }
    // The value of `key`, or nullptr.
    [[nodiscard]] const Scalar* find(std::string_view key) const;
    // Whether both are the same block (an empty baseline shares nothing).
    [[nodiscard]] bool shares(const Baseline& other) const {
        return values_ && values_ == other.values_;
    }

  private:
    friend class BaselinePool;
    explicit Baseline(std::shared_ptr<const Values> values) : values_(std::move(values)) {}
    std::shared_ptr<const Values> values_;
};

// Hands out one Baseline per distinct list of values (the same keys with
// the same values in the same order). It holds them weakly: a list no
// interface holds any more is freed with its last holder, and its entry is
// swept once the entries have doubled since the last sweep.
class BaselinePool {
  public:
    Baseline intern(const Baseline::Values& values);
    // Entries, live or not yet swept.
    [[nodiscard]] std::size_t entries() const { return entries_.size(); }

  private:
    std::unordered_multimap<std::size_t, std::weak_ptr<const Baseline::Values>> entries_;
    std::size_t live_after_sweep_ = 0;
};

}  // namespace nictune::watch
