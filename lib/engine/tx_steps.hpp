// The steps that apply (apply.cpp) and rollback (rollback.cpp) share: order
// writes by phase, write them, read back what they touched, and restore
// values (write, then verify). Internal to engine/: nothing outside it
// includes this header.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backend/backend.hpp"
#include "engine/setting.hpp"
#include "engine/transaction.hpp"
#include "model/schema.hpp"

namespace nictune::tx {

int64_t unix_now();

// One value to write. Consecutive writes to the same interface and section
// go out as one message.
struct Write {
    std::optional<NicRef> nic;  // none: a system setting
    SettingId id;
    Scalar value;
    std::size_t feature_index = 0;
    uint32_t feature_bits = 0;
};

// Order: the phases of the schema's section table (phase_of), forwards for
// an apply, backwards for an undo (tuned and sysctls first, channels last).
// Stable: within a phase, each interface keeps its own order, and the same
// phase of every interface comes together, so that it goes out as one batch.
enum class Direction : uint8_t { Apply, Undo };

template <class T, class SectionOf>
void order_by_phase(std::vector<T>& items, SectionOf section_of, Direction d) {
    std::stable_sort(items.begin(), items.end(), [&](const T& a, const T& b) {
        const Phase pa = phase_of(section_of(a));
        const Phase pb = phase_of(section_of(b));
        return d == Direction::Apply ? pa < pb : pb < pa;
    });
}

// Write: executes the writes, grouped (see execute in tx_steps.cpp). One
// error per write (a message's error applies to each of its writes), and
// which were attempted: with stop_on_error, nothing after a batch with a
// failure is sent.
//
// The errors by write index, kept apart: nearly every write has none, and a
// vector of 4,608 empty optionals (an apply of 512 interfaces) was 800 KB of
// the transaction's peak memory.
class WriteErrors {
  public:
    // The error of write i; an empty optional for most.
    [[nodiscard]] const std::optional<Error>& operator[](std::size_t i) const;
    void set(std::size_t i, Error e);
    // How many writes failed, and the error of the first (by index) of them.
    [[nodiscard]] std::size_t count() const { return errors_.size(); }
    [[nodiscard]] const Error* first() const {
        return errors_.empty() ? nullptr : &*errors_.begin()->second;
    }

  private:
    std::map<std::size_t, std::optional<Error>> errors_;
};
struct Executed {
    WriteErrors errors;
    std::vector<bool> attempted;
};
Executed execute(Backend& be, const std::vector<Write>& writes, bool stop_on_error,
                 const std::function<void(int group)>& before = {});

// [irq]: an IRQ the kernel does not let anyone place (a managed IRQ answers
// EIO) or that went away is skipped and reported, not a failure to undo.
bool skipped_irq(const Write& w, const std::optional<Error>& e);

// Whether a value read back is the one written (sysctls compare as the
// kernel prints them).
bool same_value(const SettingId& id, const Scalar& a, const Scalar& b);

// Read back: the interfaces and system settings the writes touched, as the
// kernel's notifications reported them or as read again.
struct Reread {
    std::vector<NicState> nics;
    std::unordered_map<int, std::size_t> by_ifindex;  // into nics
    std::optional<SystemState> sys;
    // The interfaces could not be read again (not: one of them is gone).
    std::optional<Error> nics_error;

    void add(NicState n);
    [[nodiscard]] const NicState* find(int ifindex) const;
    [[nodiscard]] Scalar value_of(const Write& w, const NicState* nic) const {
        return value_in(w.id, nic, sys ? &*sys : nullptr);
    }
};
Reread reread(Backend& be, const std::vector<Write>& writes);

// How many interfaces `writes` touch.
std::size_t interfaces_written(const std::vector<Write>& writes);

// Observes the kernel's change notifications for as long as it lives
// (Backend::observe_changes).
class Observing {
  public:
    // Observes the changes of `writes`, unless the backend reads them back
    // more cheaply (Backend::read_back_is_cheaper).
    Observing(Backend& be, const std::vector<Write>& writes)
        : be_(be), on_(!be.read_back_is_cheaper(interfaces_written(writes))) {
        if (on_) be_.observe_changes(true);
    }
    ~Observing() {
        if (on_) be_.observe_changes(false);
    }
    Observing(const Observing&) = delete;
    Observing& operator=(const Observing&) = delete;

  private:
    Backend& be_;
    bool on_;
};

// Undo: writes `writes` (the values to restore), all of them whatever
// fails, and verifies them; one result per write. An interface that is gone
// counts as restored (its settings went with it).
std::vector<RestoreResult> restore(Backend& be, const std::vector<Write>& writes);

}  // namespace nictune::tx
