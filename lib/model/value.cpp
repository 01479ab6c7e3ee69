#include "model/value.hpp"

namespace nictune {

Scalar scalar_of(Key k, uint64_t v) {
    switch (key_info(k).type) {
        case ValueType::Bool:
            return v != 0;
        case ValueType::Enum:
            if (auto n = enum_name(k, v)) return std::string(*n);
            return v;
        default:
            return v;
    }
}

std::string to_string(const Scalar& s) {
    struct V {
        std::string operator()(std::monostate) const { return "-"; }
        std::string operator()(bool b) const { return b ? "true" : "false"; }
        std::string operator()(uint64_t n) const { return std::to_string(n); }
        std::string operator()(const std::string& t) const { return t; }
    };
    return std::visit(V{}, s);
}

}  // namespace nictune
