#include "flow/passes/headroom.h"

#include <algorithm>
#include <cstdlib>

#include "measure/shared_card.h"
#include "runtime/ctest_gpus.h"
#include "runtime/kv_cache_types.h"
#include "util/text.h"

namespace fp {
namespace {

// The runtime's CUDA ordinal of a backend name ("CUDA1" -> 1), by the runtime data's name format.
std::optional<int> gpu_ordinal(const std::string& device, const RuntimeSignatures& sigs) {
  if (sigs.gpu_backend_format.empty()) return std::nullopt;
  for (int k = 0; k < 64; ++k)
    if (sigs.gpu_backend_name(k) == device) return k;
  return std::nullopt;
}

// Who else holds memory on each place of the cache (the other processes of each GPU, the host
// processes matching the case's neighbours), the neighbours and the deployed context to check.
void beside_the_runtime(const CaseContext& ctx, const std::vector<std::string>& devices, const FreeMemory& fm, HeadroomInput& in) {
  for (const auto& d : devices) {
    OthersOn on;
    on.device = d;
    if (auto k = gpu_ordinal(d, ctx.signatures)) {
      const auto index = nvml_index_of_ordinal(*k, ctx.c.launch.env);
      if (!index) {
        on.where = d;
        on.why_not = "its GPU's NVML index is not known (CUDA_VISIBLE_DEVICES names it by UUID?)";
      } else {
        const auto name = fm.gpu_names.find(*index);
        on.where = "GPU " + std::to_string(*index) + (name == fm.gpu_names.end() ? "" : " (" + name->second + ")");
        if (auto it = fm.gpu_others.find(*index); it != fm.gpu_others.end()) {
          on.listed = true;
          on.processes = it->second;
        } else if (auto w = fm.gpu_others_why_not.find(*index); w != fm.gpu_others_why_not.end()) {
          on.why_not = "NVML could not list its processes: " + w->second;
        } else {
          on.why_not = fm.gpu_why_not.empty() ? "no NVML reading of its GPU" : fm.gpu_why_not;
        }
      }
    } else if (d == "CPU") {
      on.where = "the host";
      on.why_not = "MemAvailable already leaves out what the host's other processes hold (flashproof lists a GPU's processes, through NVML)";
      on.processes = fm.host_matches;
    } else {
      on.where = d;
      on.why_not = "flashproof lists the processes of NVIDIA GPUs only";
    }
    in.others.push_back(std::move(on));
  }
  if (!ctx.c.headroom) return;
  for (const auto& n : ctx.c.headroom->neighbours) in.neighbours.push_back({n.name, n.match, n.device, n.mib});
  in.check_deployed = true;
  in.deployed_context = ctx.c.headroom->deployed_context;
}

}  // namespace

std::optional<unsigned> nvml_index_of_ordinal(int k, const std::map<std::string, std::string>& launch_env) {
  std::string list;
  if (auto it = launch_env.find("CUDA_VISIBLE_DEVICES"); it != launch_env.end()) list = it->second;
  else if (auto ids = ctest_gpu_ids(); ids && *ids) list = **ids;
  else if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) list = v;
  if (list.empty()) return static_cast<unsigned>(k);
  const std::vector<std::string> ids = split_commas(list);
  if (k < 0 || static_cast<size_t>(k) >= ids.size()) return std::nullopt;
  const std::string& id = ids[static_cast<size_t>(k)];
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return static_cast<unsigned>(std::stoul(id));
}

HeadroomOutcome launch_headroom(const CaseContext& ctx, const TimedPass& pass, const LogScan& scan) {
  HeadroomOutcome none;
  if (ctx.c.attach) {
    none.why_not = "attached: flashproof has no model file of this server (layers, KV heads, head size) and did not start it";
    return none;
  }
  if (!ctx.model) {
    none.why_not = "the model's attention shape is not known: " + (ctx.model_note.empty() ? "no GGUF header read" : ctx.model_note);
    return none;
  }
  auto types = load_kv_cache_types(ctx.c.runtime);
  if (!types) {
    none.why_not = "the runtime's KV cache types are not known: " + types.error().message;
    return none;
  }
  HeadroomInput in;
  const ModelFacts& m = *ctx.model;
  in.shape = {m.layers, m.n_head_kv, m.head_size_k, m.head_size_v};
  KvPair asked = kv_pair_of(pass.argv, *types);
  KvPair used = asked;
  const auto total = scan.kv_total();
  if (total && !total->k_type.empty()) used.k = total->k_type;
  if (total && !total->v_type.empty()) used.v = total->v_type;
  auto cost = [&](const std::string& type) {
    KvTypeCost c{type, 1, 0};
    if (auto it = types->block_bytes.find(type); it != types->block_bytes.end()) c = {type, it->second.elements, it->second.bytes};
    return c;
  };
  in.k = cost(used.k);
  in.v = cost(used.v);
  if (total && total->cells > 0) {
    // The runtime keeps `cells` per KV stream (one per parallel sequence unless its cache is unified).
    const long streams = std::max(1L, total->streams);
    in.cells = total->cells * streams;
    in.cells_source = streams > 1 ? std::to_string(streams) + " streams of " + std::to_string(total->cells) +
                                        " cells, the runtime's KV cache line"
                                  : "cells in the runtime's KV cache line";
  } else {
    in.cells = ctx.c.shape.context;
    in.cells_source = "shape.context (the runtime stated no cells)";
  }
  in.kv_mib_by_device = scan.kv_mib_by_device();
  if (total) {
    in.runtime_kv_mib = total->mib;
  } else if (!in.kv_mib_by_device.empty()) {
    double sum = 0;
    for (const auto& [d, mib] : in.kv_mib_by_device) sum += mib;
    in.runtime_kv_mib = sum;
  }
  const auto compute = scan.compute_mib_by_device();
  if (!compute.empty()) {
    double sum = 0;
    for (const auto& [d, mib] : compute) sum += mib;
    in.compute_mib = sum;
  }
  // Where the cache lives: the devices of the runtime's KV buffer lines; none named: the CPU when
  // nothing expects a GPU.
  std::vector<std::string> devices;
  for (const auto& [d, mib] : in.kv_mib_by_device) devices.push_back(d);
  if (devices.empty()) devices.push_back("CPU");
  const FreeMemory& fm = pass.free_memory_low;
  const std::string lowest = "lowest of " + std::to_string(fm.readings) + " readings while serving";
  std::vector<std::string> unmeasured;
  for (const auto& d : devices) {
    if (auto k = gpu_ordinal(d, ctx.signatures)) {
      auto index = nvml_index_of_ordinal(*k, ctx.c.launch.env);
      auto it = index ? fm.gpu_free_bytes.find(*index) : fm.gpu_free_bytes.end();
      if (it == fm.gpu_free_bytes.end()) {
        unmeasured.push_back(d + " (" + (fm.gpu_why_not.empty() ? "no NVML reading of its GPU" : fm.gpu_why_not) + ")");
        continue;
      }
      const auto name = fm.gpu_names.find(it->first);
      in.free.push_back({d, it->second, "NVML free memory of GPU " + std::to_string(it->first) +
                                            (name == fm.gpu_names.end() ? "" : " (" + name->second + ")") + ", " + lowest});
    } else if (d == "CPU") {
      if (!fm.host_available_bytes) {
        unmeasured.push_back("CPU (no MemAvailable in /proc/meminfo)");
        continue;
      }
      in.free.push_back({d, *fm.host_available_bytes, "host MemAvailable, " + lowest});
    } else {
      unmeasured.push_back(d + " (flashproof measures free memory on the host and NVIDIA GPUs only)");
    }
  }
  beside_the_runtime(ctx, devices, fm, in);
  HeadroomOutcome out = compute_headroom(in);
  if (!out.headroom) return out;
  Headroom& h = *out.headroom;
  share_card(in, h);
  if (asked.k != used.k || asked.v != used.v)
    h.notes.push_back("the launch asks for K " + asked.k + ", V " + asked.v + "; the runtime allocated K " + used.k + ", V " + used.v);
  if (!unmeasured.empty()) {
    h.notes.push_back("memory left not measured on: " + join(unmeasured, "; "));
    if (h.more_tokens >= 0) h.notes.push_back("the context that fits counts only the places measured");
  }
  if (fm.readings == 0) h.notes.push_back("no free-memory reading was taken (no request was served)");
  return out;
}

}  // namespace fp
