#include "cudoctor/probe/setting_lines.hpp"

#include <gtest/gtest.h>

namespace cudoctor::probe::lines {
namespace {

using A = std::vector<Assignment>;

TEST(SettingLines, ShellAssignmentsAsBashReadsThem) {
  EXPECT_EQ(shell_assignments("export CUDA_LAUNCH_BLOCKING=1"), (A{{"CUDA_LAUNCH_BLOCKING", "1"}}));
  EXPECT_EQ(shell_assignments("  export A=1 B='two words' C=\"x y\" # note"),
            (A{{"A", "1"}, {"B", "two words"}, {"C", "x y"}}));
  EXPECT_EQ(shell_assignments("declare -x NCCL_DEBUG=INFO"), (A{{"NCCL_DEBUG", "INFO"}}));
  EXPECT_TRUE(shell_assignments("OMP_NUM_THREADS=4").empty()) << "not exported: no program sees it";
  EXPECT_EQ(shell_assignments("if [ -d /opt/cuda ]; then export CUDA_CACHE_DISABLE=1; fi"),
            (A{{"CUDA_CACHE_DISABLE", "1"}}));
  EXPECT_EQ(shell_assignments("typeset -x NCCL_DEBUG=WARN"), (A{{"NCCL_DEBUG", "WARN"}}));
  EXPECT_TRUE(shell_assignments("declare -i N=3").empty()) << "declare without -x exports nothing";
  // An assignment before a command is that command's alone.
  EXPECT_TRUE(shell_assignments("CUDA_VISIBLE_DEVICES=0 python train.py").empty());
  EXPECT_EQ(shell_assignments("export A=1; export B=2 && echo hi"), (A{{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(shell_assignments("export P=\"$HOME/x\""), (A{{"P", "$HOME/x"}})) << "nothing is expanded";
  EXPECT_TRUE(shell_assignments("export A='unterminated").empty());
  EXPECT_TRUE(shell_assignments("# export A=1").empty());
  EXPECT_TRUE(shell_assignments("export 1A=2").empty());
}

TEST(SettingLines, FishAndCsh) {
  EXPECT_EQ(fish_or_csh_assignments("set -gx TF_FORCE_GPU_ALLOW_GROWTH true"),
            (A{{"TF_FORCE_GPU_ALLOW_GROWTH", "true"}}));
  EXPECT_EQ(fish_or_csh_assignments("set --export NCCL_IB_DISABLE 1"), (A{{"NCCL_IB_DISABLE", "1"}}));
  EXPECT_TRUE(fish_or_csh_assignments("set -g NOT_EXPORTED 1").empty());
  EXPECT_EQ(fish_or_csh_assignments("setenv CUDA_CACHE_DISABLE 1"), (A{{"CUDA_CACHE_DISABLE", "1"}}));
}

TEST(SettingLines, EnvironmentFilesAndSystemdUnits) {
  EXPECT_EQ(plain_assignments("NCCL_P2P_DISABLE=\"1\""), (A{{"NCCL_P2P_DISABLE", "1"}}));
  EXPECT_TRUE(plain_assignments("# NCCL_P2P_DISABLE=1").empty());
  EXPECT_EQ(systemd_environment("Environment=CUDA_LAUNCH_BLOCKING=1 \"NCCL_SOCKET_IFNAME=eth0 eth1\""),
            (A{{"CUDA_LAUNCH_BLOCKING", "1"}, {"NCCL_SOCKET_IFNAME", "eth0 eth1"}}));
  EXPECT_EQ(systemd_environment("DefaultEnvironment=OMP_NUM_THREADS=1"), (A{{"OMP_NUM_THREADS", "1"}}));
  EXPECT_TRUE(systemd_environment("ExecStart=/bin/true").empty());
  EXPECT_EQ(systemd_environment("Environment = NCCL_ALGO=Ring;Tree"), (A{{"NCCL_ALGO", "Ring;Tree"}}))
      << "spaces around = and a ; inside the value";
}

TEST(SettingLines, KernelParameters) {
  EXPECT_EQ(modprobe_options("options nvidia NVreg_EnableGpuFirmware=0 NVreg_UsePageAttributeTable=1"),
            (A{{"nvidia.NVreg_EnableGpuFirmware", "0"}, {"nvidia.NVreg_UsePageAttributeTable", "1"}}));
  EXPECT_EQ(modprobe_options("options nvidia-drm modeset=1"), (A{{"nvidia_drm.modeset", "1"}}));
  EXPECT_TRUE(modprobe_options("blacklist nouveau").empty());
  EXPECT_EQ(cmdline_params("BOOT_IMAGE=/vmlinuz root=UUID=1 ro quiet i915.enable_rc6=0 rd.driver.blacklist=nouveau "
                           "nvidia-drm.modeset=1"),
            (A{{"i915.enable_rc6", "0"}, {"nvidia_drm.modeset", "1"}}));
  EXPECT_EQ(grub_cmdline("GRUB_CMDLINE_LINUX_DEFAULT=\"quiet splash i915.enable_rc6=0\""),
            "quiet splash i915.enable_rc6=0");
  EXPECT_EQ(grub_cmdline("GRUB_TIMEOUT=5"), "");
  EXPECT_EQ(grub_cmdline("GRUB_CMDLINE_LINUX=\"nvidia-drm.modeset=1 i915.enable_rc6=0\" # set by hand"),
            "nvidia-drm.modeset=1 i915.enable_rc6=0");
  EXPECT_EQ(written_word("GRUB_CMDLINE_LINUX=\"nvidia-drm.modeset=1 quiet\"", "nvidia_drm.modeset"),
            "nvidia-drm.modeset=1");
  EXPECT_EQ(written_word("options nvidia NVreg_EnableGpuFirmware=0 NVreg_X=1", "nvidia.NVreg_EnableGpuFirmware"),
            "NVreg_EnableGpuFirmware=0");
}

TEST(SettingLines, NvidiaSmiCommands) {
  EXPECT_EQ(nvidia_smi_settings("ExecStart=/usr/bin/nvidia-smi -pm 1"), (A{{"nvidia-smi -pm", "1"}}));
  EXPECT_EQ(nvidia_smi_settings("ExecStartPost=-/usr/bin/nvidia-smi -i 0 --power-limit=250 -ac 5001,1590"),
            (A{{"nvidia-smi -pl", "250"}, {"nvidia-smi -ac", "5001,1590"}}));
  EXPECT_EQ(nvidia_smi_settings("@reboot root sudo nvidia-smi -lgc 1400,1400 && nvidia-smi -rac"),
            (A{{"nvidia-smi -lgc", "1400,1400"}, {"nvidia-smi -rac", ""}}));
  EXPECT_TRUE(nvidia_smi_settings("ExecStart=/usr/bin/nvidia-persistenced --user nvpd").empty());
  EXPECT_TRUE(nvidia_smi_settings("nvidia-smi -q").empty());
  EXPECT_TRUE(nvidia_smi_settings("*/5 * * * * root nvidia-smi dmon -s u -c 2 >> /var/log/gpu").empty())
      << "a subcommand's -c is no compute mode";
}

TEST(SettingLines, WhetherALineSetsOneThing) {
  EXPECT_TRUE(sets_one_thing("export CUDA_LAUNCH_BLOCKING=1"));
  EXPECT_TRUE(sets_one_thing("export CUDA_LAUNCH_BLOCKING=1  # debugging"));
  EXPECT_FALSE(sets_one_thing("export CUDA_LAUNCH_BLOCKING=1 NCCL_DEBUG=INFO"));
  EXPECT_FALSE(sets_one_thing("export CUDA_LAUNCH_BLOCKING=1; conda activate ml"));
  EXPECT_FALSE(sets_one_thing("if true; then export A=1; fi"));
  EXPECT_TRUE(sets_one_thing("options nvidia NVreg_EnableGpuFirmware=0"));
  EXPECT_FALSE(sets_one_thing("options i915 enable_rc6=0 enable_fbc=1"));
  EXPECT_TRUE(sets_one_thing("Environment=CUDA_LAUNCH_BLOCKING=1"));
  EXPECT_FALSE(sets_one_thing("Environment=CUDA_LAUNCH_BLOCKING=1 NCCL_IB_DISABLE=1"));
  EXPECT_TRUE(sets_one_thing("set -gx TF_FORCE_GPU_ALLOW_GROWTH true"));
  EXPECT_TRUE(sets_one_thing("NCCL_IB_DISABLE=1"));
}

}  // namespace
}  // namespace cudoctor::probe::lines
