// Audit: compare what was read with a profile and with the driver facts, and
// say what is wrong, why, and what fixes it.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "model/nic_state.hpp"
#include "model/value.hpp"
#include "profile/facts.hpp"
#include "profile/loader.hpp"
#include "profile/profile.hpp"

namespace nictune {

enum class Severity : uint8_t { Info, Warn, Fail };
const char* severity_name(Severity s);

struct Finding {
    Severity severity = Severity::Info;
    std::string key;  // "coalesce.rx_usecs", "driver.version", "features.rx-gro",
                      // "sysctl.net.core.rmem_max"
    Scalar expected;
    Scalar actual;
    std::string message;  // one line: what and why
    std::string fix;      // the command or profile that fixes it (may be empty for info)
};

struct ProfileChoice {
    std::shared_ptr<const Profile> profile;
    std::string reason;  // "named with --profile", "matches driver ixgbe, pci id 8086:10fb"
};

struct InterfaceHealthReport;  // engine/health.hpp
struct SystemHealthReport;

struct InterfaceAudit {
    NicState state;
    std::optional<ProfileChoice> profile;
    std::vector<Finding> findings;
    std::shared_ptr<const InterfaceHealthReport> health = nullptr;  // null: not checked
};

struct AuditReport {
    std::vector<InterfaceAudit> interfaces;
    SystemState system;
    std::vector<std::string> warnings;  // e.g. a profile file that does not load (skipped)
    std::shared_ptr<const SystemHealthReport> health = nullptr;  // null: not checked
};

// How well a profile's [match] fits a NIC: nullopt = it does not; 0 = the
// profile has no [match] (generic); higher = more specific.
std::optional<int> match_score(const ProfileMatch& m, const Identity& id);
// A one-line reason for a match, e.g. "matches driver ixgbe".
std::string match_reason(const ProfileMatch& m, const Identity& id);

// The profile audit uses when none is named: the most specific matching
// profile with a non-empty [match], then the highest priority, then by name.
std::optional<ProfileChoice> choose_profile(std::span<const Profile> profiles, const Identity& id);

struct AuditContext {
    const FactsBook* facts = nullptr;
    const SystemState* system = nullptr;
    std::string kernel_release;  // uname -r: in-tree drivers report it as their version
};

std::vector<Finding> audit_interface(const NicState& state, const Profile* profile,
                                     const AuditContext& ctx);

// The round-trip time the socket-buffer check assumes when none is given:
// a LAN across a data centre (a direct 10G link is 0.05-0.2 ms).
inline constexpr double kDefaultRttMs = 1.0;
// The longest --sample accepted.
inline constexpr double kMaxSampleSeconds = 3600;

struct AuditRequest {
    std::vector<std::string> interfaces;  // empty: all device-backed interfaces
    bool include_virtual = false;         // with no names: also software links
    std::optional<std::string> profile;   // audit against this profile; else the best match
    // Health checks (engine/health.hpp): on unless turned off.
    bool health = true;
    // Read the counters twice, this many seconds apart, and report rates.
    std::optional<double> sample_seconds;
    double rtt_ms = kDefaultRttMs;
};

// Reads the interfaces and the system, picks profiles and computes findings.
// Errors: unknown interface or profile (user errors), or a read failure.
Result<AuditReport> run_audit(Backend& backend, const profile::Store& store, const FactsBook& facts,
                              const AuditRequest& req);

Severity worst_severity(std::span<const Finding> findings);
bool has_problems(const AuditReport& report);  // any warn or fail finding

}  // namespace nictune
