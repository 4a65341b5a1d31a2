/*
 * internal.h: what the calhost command line uses of the runtime beyond the
 * public runtime.h: opening a runtime over a configuration the command
 * already loaded (its own search rule and --store), and the loader's record
 * and instance of a loaded plugin. Internal to the host.
 */
#ifndef CALHOST_RUNTIME_INTERNAL_H
#define CALHOST_RUNTIME_INTERNAL_H

#include "calhost/runtime.h"
#include "config/config.h"
#include "loader/loader.h"

/* As calhost_runtime_open, over a loaded configuration: the runtime takes
 * *cfg over (it is zeroed; calhost_runtime_close frees it) whatever the
 * outcome. store_path as the option (--store), force_portable as the
 * option (-1: the configuration's). */
calhost_runtime_status runtime_open_config(config_settings *cfg, const char *store_path,
                                           int force_portable, calhost_runtime **out, char *err,
                                           size_t err_capacity);

/* Sets the device keys are built for (the options' device; copied; NULL:
 * the first device of [plugin NAME] devices, all when absent). Returns CALHOST_RUNTIME_OK or NO_MEMORY. */
calhost_runtime_status runtime_set_device(calhost_runtime *runtime, const char *device);

/* The runtime's configuration (owned by the runtime). */
const config_settings *runtime_config(const calhost_runtime *runtime);

/* The loader's record and the instance of a loaded plugin. */
loader_plugin *runtime_plugin_record(const calhost_runtime_plugin *p);
calhost_plugin_instance *runtime_plugin_instance(const calhost_runtime_plugin *p);

/* The loader's records of what the discovery that loaded p found (p's own
 * record among them; with a workload and no backend: every plugin the
 * configuration enables, loaded or refused, in the loader's order), into
 * *items (owned by p). Returns their count. */
size_t runtime_plugin_discovered(const calhost_runtime_plugin *p, loader_plugin *const **items);

#endif /* CALHOST_RUNTIME_INTERNAL_H */
