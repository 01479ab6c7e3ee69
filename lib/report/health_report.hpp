// The health part of the audit report: the per-interface "health" object
// and the top-level "health" object in the JSON (written in the same pass
// as the rest, see json_report.cpp), and their text view rendered from
// that JSON. What could not be read is null, with its reason under
// "unknown".
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/health.hpp"
#include "util/json_writer.hpp"

namespace nictune::report {

void write_interface_health(JsonWriter& w, const InterfaceHealthReport& h);
// "findings": one object per finding, as the interfaces and the system
// health hold them.
void write_findings(JsonWriter& w, const std::vector<Finding>& findings);
void write_system_health(JsonWriter& w, const SystemHealthReport& h);

using Label = std::function<std::string(std::string_view)>;
// The verdict line: the limits, most costly first ("" without health).
std::string verdict_text(const nlohmann::json& iface);
// The interface's health lines (PCIe, link modes, IRQs, ...).
std::string interface_health_text(const nlohmann::json& iface, const Label& label);
// The machine's health lines (softnet, irqbalance, buffers).
std::string system_health_text(const nlohmann::json& report, const Label& label);

}  // namespace nictune::report
