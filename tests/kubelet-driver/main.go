// SPDX-License-Identifier: LGPL-2.1-or-later

// kubelet-driver: a command line over the kubelet's own mount library
// (k8s.io/utils/mount, from which k8s.io/mount-utils was split), so that a test
// exercises kubemount exactly as a kubelet does: the library decides which
// program runs with which argv (`mount` and `umount` from PATH, the mounter
// path for nfs/glusterfs/ceph/cifs, blkid, mkfs.TYPE, fsck), not this file.
//
// Each command prints one JSON line on stdout; on failure the line has "ok":
// false and "error", the error text also goes to stderr and the exit status is
// 1 (2 for a usage error).  See README.md.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"
	"k8s.io/utils/mount"
)

// Set at build time (-ldflags -X) to the Debian package's version.
var libraryVersion = "unknown"

const usage = `Usage: kubelet-driver [-v N] COMMAND ARGS...
  mount [--mounter-path P] TYPE SOURCE TARGET [OPTION...]
  mount-sensitive [--mounter-path P] TYPE SOURCE TARGET [OPTION...] -- SENSITIVE...
  unmount TARGET
  list
  is-likely-not-mount-point PATH
  is-not-mount-point PATH
  refs PATH
  device-name PATH
  cleanup [--extensive] PATH
  disk-format DEV
  format-and-mount [--mounter-path P] DEV TARGET FSTYPE [OPTION...] [-- SENSITIVE...]
  resize DEV MOUNTPATH          (not in this library version: mount-utils' argv)
  needs-resize DEV MOUNTPATH    (likewise)
  version
TYPE may be "" (the library then passes no -t).  -v N: the library's klog
verbosity (its log lines go to stderr; 4 shows every command line it runs).
`

type result map[string]interface{}

func emit(r result) {
	b, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-driver: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(string(b))
}

func usageError(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "kubelet-driver: "+format+"\n", args...)
	fmt.Fprint(os.Stderr, usage)
	os.Exit(2)
}

// fail prints the library's error as the kubelet would see it and exits 1.
func fail(r result, err error) {
	r["ok"] = false
	r["error"] = err.Error()
	var me mount.MountError
	if errors.As(err, &me) {
		r["mount_error_type"] = string(me.Type)
	}
	if os.IsNotExist(err) {
		r["not_exist"] = true
	}
	if mount.IsCorruptedMnt(err) {
		r["corrupted"] = true
	}
	emit(r)
	fmt.Fprintln(os.Stderr, err.Error())
	os.Exit(1)
}

func done(r result, err error) {
	if err != nil {
		fail(r, err)
	}
	r["ok"] = true
	emit(r)
}

// splitSensitive: OPTION... -- SENSITIVE... (the second list may be absent).
func splitSensitive(args []string) ([]string, []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

func cmdFlags(name string, mounterPath *string, extensive *bool) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	if mounterPath != nil {
		fs.StringVar(mounterPath, "mounter-path", "", "the kubelet's --experimental-mounter-path")
	}
	if extensive != nil {
		fs.BoolVar(extensive, "extensive", false, "IsNotMountPoint instead of IsLikelyNotMountPoint")
	}
	return fs
}

func parse(fs *flag.FlagSet, args []string, min int, what string) []string {
	if err := fs.Parse(args); err != nil {
		usageError("%s: %v", fs.Name(), err)
	}
	rest := fs.Args()
	if len(rest) < min {
		usageError("%s: want %s", fs.Name(), what)
	}
	return rest
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func main() {
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	top := flag.NewFlagSet("kubelet-driver", flag.ContinueOnError)
	verbosity := top.Int("v", 0, "klog verbosity of the library")
	top.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := top.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	_ = klogFlags.Set("logtostderr", "true")
	_ = klogFlags.Set("v", strconv.Itoa(*verbosity))
	defer klog.Flush()

	args := top.Args()
	if len(args) == 0 {
		usageError("no command")
	}
	cmd, args := args[0], args[1:]
	r := result{"op": cmd}
	var mounterPath string
	var extensive bool

	switch cmd {
	case "mount", "mount-sensitive":
		rest := parse(cmdFlags(cmd, &mounterPath, nil), args, 3, "TYPE SOURCE TARGET [OPTION...]")
		opts, sensitive := splitSensitive(rest[3:])
		m := mount.New(mounterPath)
		if cmd == "mount" {
			if sensitive != nil {
				usageError("mount: sensitive options need mount-sensitive")
			}
			done(r, m.Mount(rest[1], rest[2], rest[0], opts))
		} else {
			done(r, m.MountSensitive(rest[1], rest[2], rest[0], opts, sensitive))
		}
	case "unmount":
		rest := parse(cmdFlags(cmd, nil, nil), args, 1, "TARGET")
		done(r, mount.New("").Unmount(rest[0]))
	case "list":
		parse(cmdFlags(cmd, nil, nil), args, 0, "")
		mps, err := mount.New("").List()
		list := []result{}
		for _, mp := range mps {
			list = append(list, result{"device": mp.Device, "path": mp.Path, "type": mp.Type})
		}
		r["mounts"] = list
		done(r, err)
	case "is-likely-not-mount-point", "is-not-mount-point":
		rest := parse(cmdFlags(cmd, nil, nil), args, 1, "PATH")
		m := mount.New("")
		var notMnt bool
		var err error
		if cmd == "is-likely-not-mount-point" {
			notMnt, err = m.IsLikelyNotMountPoint(rest[0])
		} else {
			notMnt, err = mount.IsNotMountPoint(m, rest[0])
		}
		r["not_mount_point"] = notMnt
		done(r, err)
	case "refs":
		rest := parse(cmdFlags(cmd, nil, nil), args, 1, "PATH")
		refs, err := mount.New("").GetMountRefs(rest[0])
		r["refs"] = nonNil(refs)
		done(r, err)
	case "device-name":
		rest := parse(cmdFlags(cmd, nil, nil), args, 1, "PATH")
		dev, n, err := mount.GetDeviceNameFromMount(mount.New(""), rest[0])
		r["device"] = dev
		r["ref_count"] = n
		done(r, err)
	case "cleanup":
		rest := parse(cmdFlags(cmd, nil, &extensive), args, 1, "PATH")
		done(r, mount.CleanupMountPoint(rest[0], mount.New(""), extensive))
	case "disk-format":
		rest := parse(cmdFlags(cmd, nil, nil), args, 1, "DEV")
		sfm := mount.SafeFormatAndMount{Interface: mount.New(""), Exec: utilexec.New()}
		format, err := sfm.GetDiskFormat(rest[0])
		r["format"] = format
		done(r, err)
	case "format-and-mount":
		rest := parse(cmdFlags(cmd, &mounterPath, nil), args, 3, "DEV TARGET FSTYPE [OPTION...]")
		opts, sensitive := splitSensitive(rest[3:])
		sfm := mount.SafeFormatAndMount{Interface: mount.New(mounterPath), Exec: utilexec.New()}
		done(r, sfm.FormatAndMountSensitive(rest[0], rest[1], rest[2], opts, sensitive))
	case "resize":
		rest := parse(cmdFlags(cmd, nil, nil), args, 2, "DEV MOUNTPATH")
		resized, err := resize(utilexec.New(), rest[0], rest[1])
		r["resized"] = resized
		r["emulated"] = "mount-utils ResizeFs.Resize"
		done(r, err)
	case "needs-resize":
		rest := parse(cmdFlags(cmd, nil, nil), args, 2, "DEV MOUNTPATH")
		need, err := needsResize(utilexec.New(), rest[0], rest[1])
		r["needs_resize"] = need
		r["emulated"] = "mount-utils ResizeFs.NeedResize"
		done(r, err)
	case "version":
		parse(cmdFlags(cmd, nil, nil), args, 0, "")
		r["library"] = "k8s.io/utils/mount"
		r["package"] = "golang-k8s-utils-dev " + libraryVersion
		done(r, nil)
	default:
		usageError("unknown command '%s'", cmd)
	}
}

// This library version has no ResizeFs (mount-utils added it later, from
// kubernetes' pkg/util/resizefs).  The kubelet's argv, as mount-utils runs it:
// blkid through the library's own GetDiskFormat, then resize2fs DEV (ext3/4),
// xfs_growfs -d MOUNTPATH (xfs) or btrfs filesystem resize max MOUNTPATH.
func resize(exec utilexec.Interface, dev, mountPath string) (bool, error) {
	sfm := mount.SafeFormatAndMount{Interface: mount.New(""), Exec: exec}
	format, err := sfm.GetDiskFormat(dev)
	if err != nil {
		return false, fmt.Errorf("ResizeFS.Resize - error checking format for device %s: %v", dev, err)
	}
	if format == "" { // mkfs will use the whole device
		return false, nil
	}
	var tool string
	var args []string
	switch format {
	case "ext3", "ext4":
		tool, args = "resize2fs", []string{dev}
	case "xfs":
		tool, args = "xfs_growfs", []string{"-d", mountPath}
	case "btrfs":
		tool, args = "btrfs", []string{"filesystem", "resize", "max", mountPath}
	default:
		return false, fmt.Errorf("ResizeFS.Resize - resize of format %s is not supported for device %s mounted at %s",
			format, dev, mountPath)
	}
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("resize of device %s failed: %v. %s output: %s", dev, err, tool, string(out))
	}
	return true, nil
}

// mount-utils' NeedResize for ext3/ext4/xfs: not on a read-only device
// (blockdev --getro), not on a blank one; the tools decide the rest.
func needsResize(exec utilexec.Interface, dev, mountPath string) (bool, error) {
	out, err := exec.Command("blockdev", "--getro", dev).CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("failed to get readonly bit from device %s: %s: %s", dev, err, string(out))
	}
	if strings.TrimSpace(string(out)) == "1" {
		return false, nil
	}
	sfm := mount.SafeFormatAndMount{Interface: mount.New(""), Exec: exec}
	format, err := sfm.GetDiskFormat(dev)
	if err != nil {
		return false, fmt.Errorf("ResizeFS.Resize - error checking format for device %s: %v", dev, err)
	}
	switch format {
	case "":
		return false, nil
	case "ext3", "ext4", "xfs":
		return true, nil
	}
	return false, fmt.Errorf("could not parse fs info of given filesystem format: %s. Supported fs types are: xfs, ext3, ext4", format)
}
