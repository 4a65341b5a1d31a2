/*
 * config_keys.h: the one table of calhost.ini's keys. Every key of every
 * section is one line of CALHOST_CONFIG_KEYS, in the order `calhost config
 * show` visits them and config/README.md lists them. From it come the
 * parser's key check and its "known keys" message (keys.c: KEY(...) names
 * the setter set_SECTION_KEY), the visitor (config.c: show_SECTION_KEY
 * formats the value) and the test that holds config/README.md's key tables
 * to it (tests/config/test_config_keys.c). A key added here without its
 * setter and formatter does not compile.
 *
 * X(KIND, SECTION, KEY): KIND the parser's section_kind (parser.h),
 * SECTION the section's word in the file ([workload NAME]: workload), KEY
 * the key. [workload NAME] and [plugin NAME] also take keys of their own
 * (properties, plugin settings) besides the ones listed here.
 */
#ifndef CALHOST_CONFIG_KEYS_H
#define CALHOST_CONFIG_KEYS_H

#define CALHOST_CONFIG_KEYS(X)                                                                     \
  X(SEC_STORE, store, path)                                                                        \
  X(SEC_STORE, store, persistence_enabled)                                                         \
  X(SEC_PLUGINS, plugins, directories)                                                             \
  X(SEC_PLUGINS, plugins, paths)                                                                   \
  X(SEC_PLUGINS, plugins, enabled)                                                                 \
  X(SEC_PLUGINS, plugins, disabled)                                                                \
  X(SEC_CALIBRATION, calibration, cpus)                                                            \
  X(SEC_CALIBRATION, calibration, threads)                                                         \
  X(SEC_CALIBRATION, calibration, rigor)                                                           \
  X(SEC_CALIBRATION, calibration, strategy)                                                        \
  X(SEC_CALIBRATION, calibration, budget)                                                          \
  X(SEC_CALIBRATION, calibration, time_budget)                                                     \
  X(SEC_CALIBRATION, calibration, repetitions)                                                     \
  X(SEC_CALIBRATION, calibration, plugin_timeout)                                                  \
  X(SEC_LOOKUP, lookup, force_portable)                                                            \
  X(SEC_LOOKUP, lookup, backends)                                                                  \
  X(SEC_WORKLOAD, workload, operator)                                                              \
  X(SEC_WORKLOAD, workload, dtype)                                                                 \
  X(SEC_WORKLOAD, workload, shape)                                                                 \
  X(SEC_WORKLOAD, workload, model)                                                                 \
  X(SEC_MODEL, model, file)                                                                        \
  X(SEC_MODEL, model, dims)                                                                        \
  X(SEC_MODEL, model, backends)                                                                    \
  X(SEC_PLUGIN, plugin, devices)                                                                   \
  X(SEC_PLUGIN, plugin, time_budget)

#endif /* CALHOST_CONFIG_KEYS_H */
