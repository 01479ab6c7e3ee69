// The org.nictune1.Manager object: the generated adaptor implemented over
// the engine. Every handler validates its arguments, authorizes changes, and
// turns every failure into a named D-Bus error: no exception other than
// sdbus::Error leaves a handler (sdbus-c++ would terminate the process).
#pragma once

#include <sdbus-c++/sdbus-c++.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/manager.hpp"
#include "manager_adaptor.h"
#include "service/authorizer.hpp"
#include "service/watcher.hpp"

namespace nictune::service {

inline constexpr const char* kBusName = "org.nictune1";
inline constexpr const char* kObjectPath = "/org/nictune1";

// org.nictune1.Error.<Name> for an engine error.
std::string dbus_error_name(Errc code);
sdbus::Error to_dbus_error(const Error& e);

class ManagerObject final : public sdbus::AdaptorInterfaces<org::nictune1::Manager_adaptor> {
  public:
    using Base = sdbus::AdaptorInterfaces<org::nictune1::Manager_adaptor>;
    ManagerObject(sdbus::IConnection& conn, Manager& manager, Watcher& watcher, Authorizer& auth,
                  std::function<Result<void>()> reload,
                  std::function<nlohmann::json()> status_extra);
    ~ManagerObject();

  private:
    using Findings = std::vector<sdbus::Struct<std::string, std::string, std::string, std::string,
                                               std::string, std::string, std::string>>;
    using Steps = std::vector<sdbus::Struct<std::string, int32_t, std::string, std::string,
                                            std::string, std::string, std::string, bool>>;
    using Outcomes = std::vector<sdbus::Struct<std::string, std::string, std::string, std::string,
                                               std::string, std::string>>;
    using Restored =
        std::vector<sdbus::Struct<std::string, std::string, std::string, bool, std::string>>;
    using Flags = std::map<std::string, sdbus::Variant>;

    std::tuple<Findings, std::string> Audit(const std::vector<std::string>& interfaces,
                                            const std::string& profile,
                                            const Flags& flags) override;
    std::tuple<Steps, std::string> Plan(const std::string& profile,
                                        const std::vector<std::string>& interfaces,
                                        const Flags& flags) override;
    std::tuple<std::string, std::string, Outcomes, std::string> Apply(
        const std::string& profile, const std::vector<std::string>& interfaces,
        const Flags& flags) override;
    std::tuple<std::string, Restored, std::string> Rollback(const std::string& interface) override;
    std::tuple<std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>>,
               std::string>
    RollbackInterfaces(const std::vector<std::string>& interfaces) override;
    std::vector<sdbus::Struct<std::string, std::string, std::string, std::string>> ListProfiles()
        override;
    std::tuple<std::vector<sdbus::Struct<std::string, int32_t, std::string, std::string,
                                         std::string, bool>>,
               std::string>
    Status() override;
    void Reload() override;
    std::string Version() override;

    void authorize();

    Manager& manager_;
    Watcher& watcher_;
    Authorizer& auth_;
    std::function<Result<void>()> reload_;
    std::function<nlohmann::json()> status_extra_;
};

}  // namespace nictune::service
