// The targets autofuse prints kernels for, by name: one registration line per target in
// registry.cpp (docs/design.md "Adding a target"). Drivers (the pipeline, the bindings,
// autofuse-opt) find a target's Backend here; nothing else names a target.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/backend.h"
#include "target/target.h"

namespace af::backends {

/// Every registered Backend, cpu first.
const std::vector<const codegen::Backend*>& all_backends();

/// The Backend registered as `name`; throws CompileError naming the registered ones otherwise.
const codegen::Backend& find_backend(std::string_view name);

/// `host` with its device configured by target `name` ("" is cpu) from `options`: the options
/// that target declares are passed on (non-empty values only); the others, which belong to other
/// targets, are ignored. Throws CompileError for an unknown target or option value.
target::Target configure_target(target::Target host, std::string_view name,
                                const std::map<std::string, std::string>& options = {});

/// The backends that print `t`'s kernels, preferred first: its device's target, then cpu (which
/// takes every kernel) when that is another whose kernels may fall back to the host
/// (Backend::host_fallback); without cpu, a kernel the chain refuses runs as ATen ops.
std::vector<const codegen::Backend*> backend_chain(const target::Target& t);

}  // namespace af::backends
