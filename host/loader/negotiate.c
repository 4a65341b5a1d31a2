/*
 * negotiate.c: the host's side of the plugin ABI handshake (plugin.h): offer
 * the host's ABI range and services, validate the plugin's reply and vtable
 * (range overlap, chosen version, struct sizes, identity strings, every
 * REQUIRED entry), and keep a zero-filled copy of the vtable so an entry the
 * plugin did not compile reads as NULL. Portable (also built for Windows).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "entries.h"
#include "loader.h"
#include "module.h"
#include "base/str.h"

/* The size of the ABI 1 vtable: every ABI 1 entry must be inside it. */
#define VTABLE_V1_SIZE (offsetof(calhost_plugin_vtable, check) + sizeof(void (*)(void)))

/* A vtable entry the loader checks: name, offset, since which ABI, required. */
static const struct entry {
  const char *name;
  size_t offset;
  uint32_t since;
  int required;
} entries[] = {
#define E(f, since, req)                                                                           \
  { #f, offsetof(calhost_plugin_vtable, f), since, req }
    E(create, 1, 1),
    E(destroy, 1, 1),
    E(build_key, 1, 1),
    E(validate_policy, 1, 1),
    E(open_session, 1, 1),
    E(close_session, 1, 1),
    E(candidate_count, 1, 1),
    E(serialize_candidate, 1, 1),
    E(default_policy, 1, 0),
    E(prepare, 1, 1),
    E(run, 1, 1),
    E(check, 1, 0),
    E(device_count, 2, 0),
    E(list_device, 2, 0),
    E(describe_space, 2, 0),
    E(assignment_valid, 2, 0),
    E(serialize_assignment, 2, 0),
    E(policy_assignment, 2, 0),
#undef E
};

/* Nonzero when s is a non-empty printable one-line string of at most max. */
/* Non-empty printable one-line text (base_str_one_line) of at most max
 * bytes. */
static int printable(const char *s, size_t max) {
  return s && *s && strnlen(s, max + 1) <= max && base_str_one_line(s);
}

/* The ABI 2 groups that come together (devices; parameter space) and the
 * sample workloads' shape. Returns 0, or -1 with the reason in err. */
static int check_abi2(const calhost_plugin_vtable *vt, char *err, size_t err_cap) {
  if (!vt->device_count != !vt->list_device)
    return base_str_fail(err, err_cap,
                         "vtable entries 'device_count' and 'list_device' come together");
  if (!vt->describe_space != !vt->assignment_valid ||
      !vt->describe_space != !vt->serialize_assignment ||
      (vt->policy_assignment && !vt->describe_space)) {
    snprintf(err, err_cap,
             "vtable entries 'describe_space', 'assignment_valid' and 'serialize_assignment' "
             "come together");
    return -1;
  }
  for (size_t i = 0; vt->sample_workloads && vt->sample_workloads[i]; i++) {
    const calhost_workload *w = vt->sample_workloads[i];
    if (i >= 64 || w->header.struct_type != CALHOST_STRUCT_WORKLOAD ||
        w->header.struct_size < offsetof(calhost_workload, model_digest) ||
        !printable(w->name, 128) || !printable(w->operator_name, 128) || !printable(w->dtype, 64) ||
        w->shape_rank > 16 || (w->shape_rank && !w->shape) ||
        (w->property_count && !w->properties)) {
      return base_str_fail(err, err_cap, "sample workload %zu is malformed (or more than 64)", i);
    }
  }
  return 0;
}

int loader_negotiate(struct loader_module *module, uint32_t host_min, uint32_t host_max,
                     const calhost_host_services *services, calhost_plugin_vtable *vtable_copy,
                     uint32_t *chosen, uint32_t *plugin_min, uint32_t *plugin_max, char *err,
                     size_t err_cap) {
  calhost_negotiate_fn fn =
      (calhost_negotiate_fn)loader_module_symbol(module, CALHOST_PLUGIN_ENTRY_POINT);
  calhost_negotiate_request req;
  calhost_negotiate_reply rep;
  const calhost_plugin_vtable *vt;
  calhost_status st;
  size_t n;

  *chosen = *plugin_min = *plugin_max = 0;
  memset(vtable_copy, 0, sizeof *vtable_copy);
  if (!fn)
    return base_str_fail(err, err_cap, "no entry point '%s' (not a calhost plugin?)",
                         CALHOST_PLUGIN_ENTRY_POINT);
  memset(&req, 0, sizeof req);
  memset(&rep, 0, sizeof rep);
  req.header.struct_type = CALHOST_STRUCT_NEGOTIATE_REQUEST;
  req.header.struct_version = 1;
  req.header.struct_size = (uint32_t)sizeof req;
  req.host_abi_min = host_min;
  req.host_abi_max = host_max;
  req.host = services;
  rep.header.struct_type = CALHOST_STRUCT_NEGOTIATE_REPLY;
  rep.header.struct_version = 1;
  rep.header.struct_size = (uint32_t)sizeof rep;

  st = fn(&req, &rep);
  *plugin_min = rep.plugin_abi_min;
  *plugin_max = rep.plugin_abi_max;
  /* A mismatch names both ranges, the plugin's as it reported it, with a
   * hint when that range is empty (calhost_negotiate_default reports
   * CALHOST_ABI_VERSION_MIN..vtable.abi_version: 1..0 when abi_version was
   * left 0) or missing (a hand-written negotiate that set neither end),
   * or when the ranges overlap and the plugin refused anyway. */
  if ((rep.plugin_abi_min && rep.plugin_abi_max &&
       (rep.plugin_abi_max < host_min || rep.plugin_abi_min > host_max)) ||
      st == CALHOST_ABI_MISMATCH) {
    const char *hint = !rep.plugin_abi_min && !rep.plugin_abi_max
                           ? " (the plugin reported no range: set plugin_abi_min and "
                             "plugin_abi_max in the reply)"
                       : rep.plugin_abi_max < rep.plugin_abi_min || !rep.plugin_abi_max
                           ? " (an empty range: is vtable.abi_version set?)"
                       : rep.plugin_abi_max >= host_min && rep.plugin_abi_min <= host_max
                           ? " (the ranges overlap, yet the plugin answered CALHOST_ABI_MISMATCH)"
                           : "";
    return base_str_fail(err, err_cap,
                         "ABI mismatch: plugin supports ABI %u..%u, host supports %u..%u%s",
                         rep.plugin_abi_min, rep.plugin_abi_max, host_min, host_max, hint);
  }
  if (st != CALHOST_OK)
    return base_str_fail(err, err_cap, "negotiation failed: %s", calhost_status_name(st));
  if (rep.chosen_abi_version < host_min || rep.chosen_abi_version > host_max ||
      (rep.plugin_abi_min && rep.chosen_abi_version < rep.plugin_abi_min) ||
      (rep.plugin_abi_max && rep.chosen_abi_version > rep.plugin_abi_max)) {
    snprintf(err, err_cap,
             "plugin chose ABI %u, outside the common range (plugin supports %u..%u, host "
             "supports %u..%u)",
             rep.chosen_abi_version, rep.plugin_abi_min, rep.plugin_abi_max, host_min, host_max);
    return -1;
  }
  vt = rep.vtable;
  if (!vt)
    return base_str_fail(err, err_cap, "negotiation returned no vtable");
  if (vt->struct_size < VTABLE_V1_SIZE)
    return base_str_fail(err, err_cap,
                         "vtable is %u bytes, smaller than the ABI 1 table (%zu bytes)",
                         vt->struct_size, (size_t)VTABLE_V1_SIZE);
  if (vt->abi_version < rep.chosen_abi_version)
    return base_str_fail(err, err_cap, "vtable follows ABI %u but the plugin chose ABI %u",
                         vt->abi_version, rep.chosen_abi_version);
  n = vt->struct_size < sizeof *vtable_copy ? vt->struct_size : sizeof *vtable_copy;
  memcpy(vtable_copy, vt, n);
  if (!base_str_is_name(vtable_copy->backend_name, 64)) {
    snprintf(err, err_cap, "backend name is missing or not [A-Za-z0-9_.-]{1,64}");
    return CALHOST_NEGOTIATE_BAD_IDENTITY;
  }
  if (!printable(vtable_copy->implementation_version, 128)) {
    snprintf(err, err_cap, "implementation version is missing or not one printable line");
    return CALHOST_NEGOTIATE_BAD_IDENTITY;
  }
  if (!vtable_copy->operators || !printable(vtable_copy->operators[0], 128)) {
    snprintf(err, err_cap, "the plugin lists no operators");
    return CALHOST_NEGOTIATE_BAD_IDENTITY;
  }
  for (size_t i = 0; vtable_copy->operators[i]; i++)
    if (i >= 256 || !printable(vtable_copy->operators[i], 128)) {
      snprintf(err, err_cap, "operator %zu is not one printable line (or too many operators)", i);
      return CALHOST_NEGOTIATE_BAD_IDENTITY;
    }
  if (vtable_copy->description && !printable(vtable_copy->description, 1024) &&
      vtable_copy->description[0]) {
    snprintf(err, err_cap, "description is not one printable line");
    return CALHOST_NEGOTIATE_BAD_IDENTITY;
  }
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    void (*f)(void);
    if (!entries[i].required || entries[i].since > rep.chosen_abi_version)
      continue;
    memcpy(&f, (const char *)vtable_copy + entries[i].offset, sizeof f);
    if (!f) {
      snprintf(err, err_cap, "required vtable entry '%s' is missing", entries[i].name);
      return CALHOST_NEGOTIATE_MISSING_ENTRY;
    }
  }
  if (rep.chosen_abi_version >= 2 && check_abi2(vtable_copy, err, err_cap) != 0)
    return -1;
  *chosen = rep.chosen_abi_version;
  return 0;
}

int loader_vtable_callable(const calhost_plugin_vtable *vt, uint32_t abi_version, size_t offset) {
  void (*f)(void);
  if (!vt)
    return 0;
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
    if (entries[i].offset != offset)
      continue;
    if (entries[i].since > abi_version || vt->struct_size < offset + sizeof f)
      return 0;
    memcpy(&f, (const char *)vt + offset, sizeof f);
    return f != NULL;
  }
  return 0; /* not an entry this host knows */
}
