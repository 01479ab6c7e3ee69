#include "services/network_manager.hpp"

#include <sdbus-c++/sdbus-c++.h>

#include <algorithm>
#include <map>

#include "services/call.hpp"

namespace nictune::services {
namespace {

constexpr const char* kName = "org.freedesktop.NetworkManager";
constexpr const char* kPath = "/org/freedesktop/NetworkManager";
constexpr const char* kDevice = "org.freedesktop.NetworkManager.Device";

using Settings = std::map<std::string, std::map<std::string, sdbus::Variant>>;

std::optional<std::string> text_of(const sdbus::Variant& v) {
    if (v.containsValueOfType<uint32_t>()) return std::to_string(v.get<uint32_t>());
    if (v.containsValueOfType<int32_t>()) return std::to_string(v.get<int32_t>());
    if (v.containsValueOfType<uint64_t>()) return std::to_string(v.get<uint64_t>());
    if (v.containsValueOfType<bool>()) return v.get<bool>() ? "true" : "false";
    if (v.containsValueOfType<std::string>()) return v.get<std::string>();
    return std::nullopt;
}

}  // namespace

std::string nm_key(const std::string& group, const std::string& name) {
    if (group == "802-3-ethernet" && name == "mtu") return "link.mtu";
    if (group != "ethtool") return {};
    struct Map {
        const char* nm;
        const char* key;
    };
    static constexpr Map kMap[] = {{"ring-rx", "rings.rx"},
                                   {"ring-tx", "rings.tx"},
                                   {"ring-rx-jumbo", "rings.rx_jumbo"},
                                   {"ring-rx-mini", "rings.rx_mini"},
                                   {"channels-rx", "channels.rx"},
                                   {"channels-tx", "channels.tx"},
                                   {"channels-other", "channels.other"},
                                   {"channels-combined", "channels.combined"},
                                   {"pause-autoneg", "pause.autoneg"},
                                   {"pause-rx", "pause.rx"},
                                   {"pause-tx", "pause.tx"}};
    for (const auto& m : kMap)
        if (name == m.nm) return m.key;
    if (name.starts_with("coalesce-")) {
        std::string k = name.substr(9);
        std::replace(k.begin(), k.end(), '-', '_');
        return "coalesce." + k;
    }
    if (name.starts_with("feature-")) return "features." + name.substr(8);
    return {};
}

namespace {

// One device's answer over an open connection to NetworkManager (`owner`).
Known<NmDevice> ask(sdbus::IConnection& conn, const std::string& owner, const BusOptions& opts,
                    const std::string& ifname) {
    NmDevice d;
    d.running = true;
    try {
        auto nm = sdbus::createProxy(conn, owner, kPath);
        auto dev = call_or_none<sdbus::ObjectPath>(*nm, kName, "GetDeviceByIpIface", ifname,
                                                   "org.freedesktop.NetworkManager.UnknownDevice");
        if (!dev) {
            d.detail = "NetworkManager does not know " + ifname;
            return Known<NmDevice>::of(std::move(d));
        }
        auto p = sdbus::createProxy(conn, owner, *dev);
        const sdbus::Variant managed = p->getProperty("Managed").onInterface(kDevice);
        d.managed = managed.containsValueOfType<bool>() && managed.get<bool>();
        if (!d.managed) {
            d.detail = ifname + " is not managed by NetworkManager";
            return Known<NmDevice>::of(std::move(d));
        }
        const sdbus::Variant active = p->getProperty("ActiveConnection").onInterface(kDevice);
        if (!active.containsValueOfType<sdbus::ObjectPath>() ||
            active.get<sdbus::ObjectPath>() == "/") {
            d.detail = ifname + " is managed by NetworkManager, with no active connection";
            return Known<NmDevice>::of(std::move(d));
        }
        Settings settings;
        uint64_t version = 0;
        p->callMethod("GetAppliedConnection")
            .onInterface(kDevice)
            .withArguments(uint32_t{0})
            .storeResultsTo(settings, version);
        ForeignConfig c;
        c.tool = "NetworkManager";
        std::string id, uuid;
        if (auto g = settings.find("connection"); g != settings.end()) {
            if (auto it = g->second.find("id"); it != g->second.end())
                id = text_of(it->second).value_or("");
            if (auto it = g->second.find("uuid"); it != g->second.end())
                uuid = text_of(it->second).value_or("");
        }
        c.source = "connection " + (id.empty() ? std::string("?") : "'" + id + "'") +
                   (uuid.empty() ? "" : " (" + uuid + ")");
        for (const auto& [group, values] : settings)
            for (const auto& [name, v] : values) {
                const std::string key = nm_key(group, name);
                if (key.empty()) continue;
                auto t = text_of(v);
                if (!t) continue;
                // mtu 0 is NetworkManager's "leave it as it is".
                if (key == "link.mtu" && *t == "0") continue;
                c.settings.push_back(ForeignSetting{key, *t, group + "." + name, 0});
            }
        d.detail = ifname + " is managed by NetworkManager, " + c.source;
        d.config = std::move(c);
        return Known<NmDevice>::of(std::move(d));
    } catch (const sdbus::Error& e) {
        return Known<NmDevice>::none("NetworkManager on " + bus_label(opts) + ": " + e.getName() +
                                     ": " + e.getMessage());
    } catch (const std::exception& e) {
        return Known<NmDevice>::none("NetworkManager on " + bus_label(opts) + ": " + e.what());
    }
}

}  // namespace

namespace {

// The client over sdbus-c++.
class SdbusNmClient final : public NmClient {
  public:
    explicit SdbusNmClient(BusOptions opts) : opts_(std::move(opts)) {}
    Known<NmDevice> device(const std::string& ifname) override;

  private:
    BusOptions opts_;
    std::unique_ptr<sdbus::IConnection> conn_;
    std::optional<std::string> owner_;  // NetworkManager's unique name
    bool asked_ = false;
    std::string why_;  // why there is no connection
};

Known<NmDevice> SdbusNmClient::device(const std::string& ifname) {
    if (!asked_) {
        asked_ = true;
        conn_ = connect(opts_, &why_);
        if (conn_) {
            try {
                owner_ = owner_of(*conn_, kName);
            } catch (const sdbus::Error& e) {
                why_ = "NetworkManager on " + bus_label(opts_) + ": " + e.getName() + ": " +
                       e.getMessage();
                conn_.reset();
            } catch (const std::exception& e) {
                why_ = "NetworkManager on " + bus_label(opts_) + ": " + e.what();
                conn_.reset();
            }
        }
    }
    if (!conn_) return Known<NmDevice>::none(why_);
    if (!owner_) {
        NmDevice d;
        d.detail = "NetworkManager is not running on " + bus_label(opts_);
        return Known<NmDevice>::of(std::move(d));
    }
    return ask(*conn_, *owner_, opts_, ifname);
}

}  // namespace

std::unique_ptr<NmClient> NmClient::open(BusOptions opts) {
    return std::make_unique<SdbusNmClient>(std::move(opts));
}

Known<NmDevice> nm_device(const BusOptions& opts, const std::string& ifname) {
    return NmClient::open(opts)->device(ifname);
}

}  // namespace nictune::services
