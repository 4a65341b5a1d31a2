/*
 * devices.h: the devices of a device backend (ABI 2 device_count and
 * list_device), as calibrate, `calhost devices`, lookup/override --device
 * and the deployment runtime see them: one owner for listing them (in this
 * process through the stdout guard, or in an isolated child), checking what
 * the plugin described, choosing devices by index or identity (--device,
 * [plugin NAME] devices), telling whether two devices share hardware, and
 * checking that a plugin takes its [plugin NAME] section (config check
 * --plugins: create and list in a child).
 * Internal to the host.
 */
#ifndef CALHOST_RUNTIME_DEVICES_H
#define CALHOST_RUNTIME_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "calhost/plugin.h"
#include "config/config.h"
#include "loader/loader.h"

/* One device, copied from the plugin's calhost_device_info (strings owned). */
typedef struct runtime_device {
  uint32_t index; /* the plugin's index (calhost_target.device_index) */
  uint32_t kind;  /* a calhost_device_kind */
  char *identity; /* non-empty, printable, at most 512 bytes */
  char *name;     /* the plugin's display name (the identity when it gave none) */
  char *hardware; /* "" when unknown */
  calhost_property *details;
  size_t detail_count;
} runtime_device;

typedef struct runtime_device_list {
  runtime_device *items;
  size_t count, capacity; /* capacity: items allocated (base_array_grow) */
} runtime_device_list;

/* Whether a loaded plugin has the ABI 2 device entries (a device backend). */
int runtime_devices_supported(const loader_plugin *p);

/* Lists the devices of an instance in this process (stdout guarded). A
 * plugin without the entries has none (count 0, returns 0). Returns 0, or
 * -1 with why ("device_count failed: ...", an empty or duplicate
 * identity, a duplicate index; never naming the backend: the caller does,
 * once) and *out empty. Free with
 * runtime_device_list_free. */
int runtime_devices_list(loader_plugin *p, calhost_plugin_instance *inst, runtime_device_list *out,
                         char *why, size_t cap);

/* As runtime_devices_list, but in a forked child (isolate.h) that creates
 * an instance with the [plugin NAME] settings of cfg, so that neither the
 * plugin's code nor its device runtime's threads ever run in the calling
 * process. timeout_seconds <= 0: no limit. A crash, hang or failure of
 * the plugin is a -1 with why saying what failed ("create: killed by
 * signal 11 (SIGSEGV)", "device 0 has no usable identity"), which the
 * caller prefixes with the backend's name. */
int runtime_devices_list_isolated(const config_settings *cfg, loader_plugin *p,
                                  double timeout_seconds, runtime_device_list *out, char *why,
                                  size_t cap);

/* Whether the plugin takes its [plugin NAME] section of cfg as calibrate
 * would: in a forked child (as runtime_devices_list_isolated), creates an
 * instance with the section's settings and, for a device backend, lists
 * its devices; then checks that the section's `devices` name devices it
 * has (a backend without devices ignores the key, as calibrate does).
 * Returns 0; or -1 with why, which names neither the backend nor the
 * section (the caller does): "create failed: STATUS: message", a crash or
 * hang ("create: killed by signal 11 (SIGSEGV)", "listing devices: ..."),
 * a listing failure; or RUNTIME_SETTINGS_NO_DEVICE with the `devices`
 * key's refusal in why, "devices: no device 7 (...)". */
#define RUNTIME_SETTINGS_NO_DEVICE (-2)
int runtime_settings_check_isolated(const config_settings *cfg, loader_plugin *p,
                                    double timeout_seconds, char *why, size_t cap);

/* Frees the list's contents and zeroes it. NULL-safe. */
void runtime_device_list_free(runtime_device_list *l);

/* The device a spec names: an index (decimal digits: the plugin's index)
 * or an identity (exact). NULL with why when none matches (why may be NULL
 * with cap 0 when the reason is not wanted). */
const runtime_device *runtime_devices_find(const runtime_device_list *l, const char *spec,
                                           char *why, size_t cap);

/* The devices calibrate runs on for backend: the [plugin NAME] devices
 * selection of cfg (all when absent), as positions into l, in listing
 * order, into positions (capacity l->count) and *count. Returns 0, or -1
 * with why naming the listed device the plugin does not have and where the
 * key is ("[plugin NAME] devices: no device 7 (...) (FILE:LINE)"). */
int runtime_devices_selected(const config_settings *cfg, const char *backend,
                             const runtime_device_list *l, size_t *positions, size_t *count,
                             char *why, size_t cap);

/* "other", "cpu", "gpu", "accelerator" (static); "other" for unknown. */
const char *runtime_device_kind_name(uint32_t kind);

/* Whether a device runs on the host's CPUs: its hardware is "cpu" or its
 * kind is cpu. Its sweeps are serialised with the CPU sweeps. */
int runtime_device_on_cpu(const runtime_device *d);

/* Whether two devices may disturb each other's timings: either runs on
 * the CPUs, either's hardware is unknown, or their hardware strings are
 * equal. Devices that do not share hardware may be calibrated at once. */
int runtime_devices_share_hardware(const runtime_device *a, const runtime_device *b);

/* Groups devices into waves whose members may be calibrated at once: a
 * device on the CPUs is alone in its wave, and two devices share a wave only
 * when they do not share hardware (runtime_devices_share_hardware). Greedy,
 * in order: wave[i] (capacity n) gets device i's wave, numbered from 0 in
 * order of first use. Returns the number of waves. */
size_t runtime_devices_schedule(const runtime_device *const *devices, size_t n, size_t *wave);

#endif /* CALHOST_RUNTIME_DEVICES_H */
