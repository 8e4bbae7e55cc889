#include "cudoctor/snapshot/snapshot_json.hpp"

namespace cudoctor::snapshot {

// The macro writes to_json/from_json with every listed field; from_json takes defaults for
// missing keys.
#define CUDOCTOR_JSON(Type, ...)                                                            \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {              \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                \
  }                                                                                         \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {            \
    const Type nlohmann_json_default_obj{};                                                 \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__)) \
  }

std::string to_string(const ToolkitFoundBy& f) {
  if (f.how == ToolkitFinder::other) return f.detail;
  auto phrase = nlohmann::json(f.how).get<std::string>();
  return f.detail.empty() ? phrase : phrase + " " + f.detail;
}

std::vector<std::string> to_strings(const std::vector<ToolkitFoundBy>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back(to_string(f));
  return out;
}

void to_json(nlohmann::json& j, const ToolkitFoundBy& v) {
  j = to_string(v);
}
void from_json(const nlohmann::json& j, ToolkitFoundBy& v) {
  const auto phrase = j.get<std::string>();
  constexpr std::string_view k_conda = "conda environment ";
  if (phrase.starts_with(k_conda)) {
    v = {ToolkitFinder::conda_environment, phrase.substr(k_conda.size())};
    return;
  }
  v = {nlohmann::json(phrase).get<ToolkitFinder>(), ""};
  if (v.how == ToolkitFinder::other || v.how == ToolkitFinder::conda_environment) v = {ToolkitFinder::other, phrase};
}

CUDOCTOR_JSON(Unreadable, path, reason)
CUDOCTOR_JSON(Detected, kind, evidence)
CUDOCTOR_JSON(Tool, name, path)
CUDOCTOR_JSON(Package, name, version, manager)
CUDOCTOR_JSON(EnvVar, name, value, source)
CUDOCTOR_JSON(HostFacts, os_id, os_version, os_pretty_name, kernel, arch, hostname, user, uid, gids, container, wsl,
              hypervisor, secure_boot, secure_boot_evidence, os_like, tools, packages, packages_known, nvidia_env)
CUDOCTOR_JSON(PciDevice, address, vendor_id, device_id, subsystem_vendor_id, subsystem_device_id, class_code,
              vendor_name, device_name, subsystem_name, driver, current_link_speed, max_link_speed, current_link_width,
              max_link_width, runtime_status, boot_vga, power_state, runtime_control, port_address, port_max_link_speed,
              port_max_link_width)
CUDOCTOR_JSON(ModuleState, name, loaded, state)
CUDOCTOR_JSON(Blacklist, module, source, line)
CUDOCTOR_JSON(KernelModule, version, version_source, version_line, flavor)
CUDOCTOR_JSON(DeviceNode, path, type, major, minor, mode, uid, gid, can_read, can_write)
CUDOCTOR_JSON(LibraryCandidate, path, state, target, reason)
CUDOCTOR_JSON(ForwardCompat, note, note_error, cuda, drivers, devices)
CUDOCTOR_JSON(DriverLibrary, soname, path, real_path, version, found_by, searched, candidates, forward_compat)
CUDOCTOR_JSON(ChildOutcome, status, signal, exit_code, seconds, message, last_call)
CUDOCTOR_JSON(NvmlGpu, index, name, uuid, pci_bus_id, memory_total_bytes, memory_used_bytes, temperature_c,
              utilization_gpu_pct, utilization_memory_pct, power_limit_w, power_draw_w, clock_graphics_mhz,
              clock_sm_mhz, clock_memory_mhz, max_clock_graphics_mhz, max_clock_memory_mhz, pcie_gen_current,
              pcie_gen_max, pcie_width_current, pcie_width_max, persistence_mode, mig_mode, compute_capability, errors,
              power_limit_enforced_w, power_limit_default_w, power_limit_min_w, power_limit_max_w, clocks_event_reasons,
              performance_state, max_clock_sm_mhz)
CUDOCTOR_JSON(NvmlFacts, library, outcome, init_code, init_error_name, init_error_string, driver_version,
              cuda_driver_version, gpus)
CUDOCTOR_JSON(CdiSpec, path, kind, driver_versions, libraries, missing)
CUDOCTOR_JSON(DriverFacts, modules, modules_listed, blacklists, blacklist_sources_unreadable, kernel_module,
              module_files, device_nodes, nvidia_modprobe, nvidia_modprobe_setuid, libraries, libcuda_unversioned,
              libcuda_unversioned_beside, nvml, other_display_devices, pci_listed, cdi_specs)
CUDOCTOR_JSON(Gpu, pci, nvml)
CUDOCTOR_JSON(VersionWitness, source, version)
CUDOCTOR_JSON(ToolkitComponent, name, version, library)
CUDOCTOR_JSON(Toolkit, root, found_by, layout, version, witnesses, nvcc, bin_dir, lib_dir, components, nvcc_archs,
              missing)
CUDOCTOR_JSON(GlobalSetting, file, line, text)
CUDOCTOR_JSON(LoaderPick, soname, path, rule)
CUDOCTOR_JSON(ToolkitFacts, toolkits, cuda_link_target, cuda_link_resolved, path_nvcc, path_nvcc_real, cuda_home,
              cuda_path, cuda_root, path, ld_library_path, ld_so_conf_dirs, global_settings, cudart_picks)
CUDOCTOR_JSON(FrameworkLibrary, soname, path, rule, version, bundled)
CUDOCTOR_JSON(OpenedLibrary, soname, opener, path, rule)
CUDOCTOR_JSON(PackageVersion, name, version, source)
CUDOCTOR_JSON(DeepLibrary, soname, predicted, predicted_real, mapped)
CUDOCTOR_JSON(DeepView, status, signal, exit_code, seconds, message, last_step, run_as, stderr_tail, imported, error,
              version, cuda, available, device_count, devices, arch_list, matmul, ld_preload, preloaded, mapped,
              libraries, extra)
CUDOCTOR_JSON(Framework, name, version, cuda, hip, cudnn, location, source, gpu_library, cuda_unknown, libraries,
              missing, missing_versions, sm_archs, ptx_archs, requires_nvidia, error, installer, inherited, companions,
              minimum_jaxlib, dlopened, opened, deep)
CUDOCTOR_JSON(PythonEnv, prefix, interpreter, version, kind, found_by, site_packages, frameworks, nvidia_packages,
              libcuda_users, system_site_packages, base_prefix, conda_meta)
CUDOCTOR_JSON(EnvListCut, source, entries, inspected)
CUDOCTOR_JSON(PythonFacts, path_python, path_python_env, envs, lists_cut)
CUDOCTOR_JSON(CudaCall, code, name, message)
CUDOCTOR_JSON(CudaDevice, index, name, compute_capability, memory_total_bytes, multiprocessors, clock_mhz,
              memory_clock_mhz, memory_bus_width_bits, pci_bus_id, context)
CUDOCTOR_JSON(DriverApiFacts, library, outcome, driver_version, init, device_count_call, device_count, devices)
CUDOCTOR_JSON(CudartFacts, library, origin, driver_library, outcome, runtime_version, driver_version, device_count_call,
              device_count, set_device)
CUDOCTOR_JSON(CopyCheck, kind, bytes, gb_per_s, matches)
CUDOCTOR_JSON(GemmCheck, dtype, m, n, k, max_abs_error, tolerance, passed, tflops, throughput_size, status)
CUDOCTOR_JSON(ComputeCheck, device, cudart, cublas, outcome, allocation, copies, copies_timed_alone, gemms)
CUDOCTOR_JSON(RuntimeFacts, ran, not_run_reason, cuda_visible_devices, driver_api, cudarts, compute)
CUDOCTOR_JSON(Setting, name, value, kind, source, line, scope, owned, syntax, alone, written)
CUDOCTOR_JSON(ModuleParam, name, module_loaded, exists, value, source)
CUDOCTOR_JSON(LibraryWords, framework, location, libraries, present, absent)
CUDOCTOR_JSON(SettingsFacts, settings, files_read, module_params, allocator_keys)
CUDOCTOR_JSON(Snapshot, schema, tool_version, root, host, driver, gpus, toolkit, python, runtime, settings, unreadable)

#undef CUDOCTOR_JSON

std::string to_string(ChildStatus status) {
  return nlohmann::json(status).get<std::string>();
}

namespace {
// A null value reads as the field's default: snapshots written before a field existed, or
// by a renderer that left a layer it did not inspect as null, still load.
void drop_nulls(nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_null()) {
        it = j.erase(it);
      } else {
        drop_nulls(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) drop_nulls(e);
  }
}
}  // namespace

util::Result<Snapshot> snapshot_from_json_text(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    drop_nulls(j);
    if (!j.is_object() || !j.contains("schema")) return util::error("not a cudoctor snapshot: no \"schema\" key");
    if (!j["schema"].is_number_integer()) return util::error("not a cudoctor snapshot: \"schema\" is not an integer");
    const int schema = j["schema"].get<int>();
    if (schema > k_schema_version)
      return util::error("snapshot schema " + std::to_string(schema) + " is newer than this cudoctor understands (" +
                         std::to_string(k_schema_version) + ")");
    return j.get<Snapshot>();
  } catch (const nlohmann::json::exception& e) {
    return util::error(std::string("invalid snapshot JSON: ") + e.what());
  }
}

}  // namespace cudoctor::snapshot
