#include "backend/backend.hpp"

namespace nictune {

Result<std::vector<NicState>> read_present(Backend& backend, const ReadRequest& req) {
    if (req.names.empty()) return std::vector<NicState>{};
    auto all = backend.read_interfaces(req);
    if (all) return all;
    std::vector<NicState> out;
    ReadRequest one = req;
    for (const auto& name : req.names) {
        one.names = {name};
        auto r = backend.read_interfaces(one);
        if (r) {
            for (auto& st : *r)
                out.push_back(std::move(st));
        } else if (r.error().code != Errc::NoSuchInterface) {
            return std::unexpected(std::move(r.error()));
        }
    }
    return out;
}

}  // namespace nictune
