/*
 * devices.c: listing, checking and choosing a device backend's devices
 * (devices.h). The isolated listing is a child (isolate.h) that creates an
 * instance, lists its devices and sends one record per device (the codec's
 * DEV_* records, isolate/codec.h).
 */
#include "devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/str.h"
#include "base/words.h"
#include "binding.h"
#include "config/values.h"
#include "isolate/codec.h"
#include "isolate/isolate.h"

#define IDENTITY_MAX 512u

/* A malloc'd copy of s, "" for NULL (NULL only when memory ran out). */
static char *dup_or_empty(const char *s) {
  size_t n = strlen(s ? s : "");
  char *d = malloc(n + 1);
  if (d)
    memcpy(d, s ? s : "", n + 1);
  return d;
}

static void device_free(runtime_device *d) {
  free(d->identity);
  free(d->name);
  free(d->hardware);
  isolate_props_free(d->details, d->detail_count);
  memset(d, 0, sizeof *d);
}

void runtime_device_list_free(runtime_device_list *l) {
  if (!l)
    return;
  for (size_t i = 0; i < l->count; i++)
    device_free(&l->items[i]);
  free(l->items);
  memset(l, 0, sizeof *l);
}

/* Appends a device (fields borrowed, copied) after checking it against
 * the list: -1 with why on a bad or duplicate device or no memory. */
static int add_device(runtime_device_list *l, uint32_t index, uint32_t kind, const char *identity,
                      const char *name, const char *hardware, const calhost_property *details,
                      size_t detail_count, char *why, size_t cap) {
  size_t len = identity ? strlen(identity) : 0;
  if (!len || len > IDENTITY_MAX || !base_str_one_line(identity) || identity[0] == ' ' ||
      identity[len - 1] == ' ') {
    snprintf(why, cap,
             "device %u has no usable identity (printable, 1 to %u bytes, no blanks at the ends)",
             index, IDENTITY_MAX);
    return -1;
  }
  if ((name && !base_str_one_line(name)) || (hardware && !base_str_one_line(hardware)))
    return base_str_fail(why, cap,
                         "device %u has a name or hardware string with control characters", index);
  for (size_t i = 0; i < l->count; i++)
    if (l->items[i].index == index)
      return base_str_fail(why, cap, "two devices have index %u", index);
  runtime_device *n = base_array_grow(l->items, l->count, &l->capacity, sizeof *n, 4);
  if (!n)
    return base_str_fail(why, cap, "out of memory");
  l->items = n;
  runtime_device *d = &l->items[l->count];
  memset(d, 0, sizeof *d);
  d->index = index;
  d->kind = kind;
  d->identity = dup_or_empty(identity);
  d->name = dup_or_empty(name && *name ? name : identity);
  d->hardware = dup_or_empty(hardware);
  d->details = detail_count ? calloc(detail_count, sizeof *d->details) : NULL;
  int oom = !d->identity || !d->name || !d->hardware || (detail_count && !d->details);
  for (size_t i = 0; !oom && i < detail_count; i++) {
    d->details[i].name = dup_or_empty(details[i].name);
    d->details[i].value = dup_or_empty(details[i].value);
    d->detail_count = i + 1;
    oom = !d->details[i].name || !d->details[i].value;
  }
  if (oom) {
    device_free(d);
    return base_str_fail(why, cap, "out of memory");
  }
  l->count++;
  return 0;
}

int runtime_devices_supported(const loader_plugin *p) {
  return p && CALHOST_PLUGIN_HAS(p, device_count) && CALHOST_PLUGIN_HAS(p, list_device);
}

int runtime_devices_list(loader_plugin *p, calhost_plugin_instance *inst, runtime_device_list *out,
                         char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  if (!runtime_devices_supported(p))
    return 0;
  uint32_t count = 0;
  loader_call c; /* device_count, then list_device: one guarded call, named as it goes */
  loader_call_begin(&c, p, "device_count");
  calhost_status st = p->vtable.device_count(inst, &count);
  c.entry = "list_device";
  int rc = 0;
  if (st != CALHOST_OK) {
    const char *m = loader_plugin_take_error(p);
    snprintf(why, cap, "device_count failed: %s%s%s", calhost_status_name(st), m ? ": " : "",
             m ? m : "");
    rc = -1;
  }
  for (uint32_t i = 0; rc == 0 && i < count; i++) {
    calhost_device_info info;
    memset(&info, 0, sizeof info);
    info.header = (calhost_struct_header){CALHOST_STRUCT_DEVICE_INFO, 1, sizeof info};
    st = p->vtable.list_device(inst, i, &info);
    if (st != CALHOST_OK) {
      const char *m = loader_plugin_take_error(p);
      snprintf(why, cap, "list_device %u failed: %s%s%s", i, calhost_status_name(st), m ? ": " : "",
               m ? m : "");
      rc = -1;
      break;
    }
    if (info.detail_count && !info.details)
      info.detail_count = 0;
    rc = add_device(out, info.index, info.kind, info.identity, info.name, info.hardware,
                    info.details, info.detail_count, why, cap);
  }
  loader_call_end(&c);
  if (rc != 0)
    runtime_device_list_free(out);
  return rc;
}

/* ---- the isolated listing --------------------------------------------- */

typedef struct list_job {
  const config_settings *cfg;
  loader_plugin *p;
  int bare;    /* create failures without the settings' place */
  int created; /* the child said create() succeeded */
  runtime_device_list *out;
  char failed[1024];
  int bad;
} list_job;

static int list_child(void *user, int fd) {
  list_job *j = user;
  isolate_proto_buf b = {0};
  calhost_plugin_instance *inst = NULL;
  char why[1024];
  runtime_device_list l = {0};
  calhost_status st = runtime_binding_create(j->cfg, j->p, &inst);
  if (st != CALHOST_OK) {
    char failure[900];
    runtime_binding_create_failure(j->cfg, j->p, st, !j->bare, failure, sizeof failure);
    snprintf(why, sizeof why, "%s", failure);
    isolate_rec_put_dev_failed(&b, why);
    isolate_proto_send(fd, &b);
    isolate_proto_buf_free(&b);
    return 3;
  }
  isolate_rec_put_empty(&b, CALHOST_REC_DEV_CREATED);
  isolate_proto_send(fd, &b);
  if (runtime_devices_list(j->p, inst, &l, why, sizeof why) != 0) {
    isolate_rec_put_dev_failed(&b, why);
    isolate_proto_send(fd, &b);
  }
  for (size_t i = 0; i < l.count; i++) {
    const runtime_device *d = &l.items[i];
    isolate_rec_device w = {d->index,    d->kind,    d->identity,    d->name,
                            d->hardware, d->details, d->detail_count};
    isolate_rec_put_dev_device(&b, &w);
    isolate_proto_send(fd, &b);
  }
  runtime_device_list_free(&l);
  loader_plugin_destroy(j->p, inst);
  isolate_rec_put_empty(&b, CALHOST_REC_DEV_DONE);
  isolate_proto_send(fd, &b);
  isolate_proto_buf_free(&b);
  return 0;
}

static void list_record(void *user, const isolate_proto_msg *m) {
  list_job *j = user;
  if (j->bad)
    return;
  if (m->type == CALHOST_REC_DEV_CREATED) {
    j->created = 1;
  } else if (m->type == CALHOST_REC_DEV_FAILED) {
    const char *s = NULL;
    isolate_rec_get_dev_failed(m, &s);
    snprintf(j->failed, sizeof j->failed, "%s", s ? s : "device listing failed");
    j->bad = 1;
  } else if (m->type == CALHOST_REC_DEV_DEVICE) {
    isolate_rec_device d;
    if (isolate_rec_get_dev_device(m, &d) != 0) {
      snprintf(j->failed, sizeof j->failed, "malformed device record");
      j->bad = 1;
    } else if (add_device(j->out, d.index, d.kind, d.identity, d.name, d.hardware, d.details,
                          d.detail_count, j->failed, sizeof j->failed) != 0) {
      j->bad = 1;
    }
    isolate_rec_device_free(&d);
  }
}

/* Creates an instance in a child and lists its devices (none for a plugin
 * without the entries): runtime_devices_list_isolated without its
 * device-backend test. */
static int list_isolated(const config_settings *cfg, loader_plugin *p, double timeout_seconds,
                         int bare, runtime_device_list *out, char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  list_job j = {.cfg = cfg, .p = p, .bare = bare, .out = out};
  isolate_options io = {.timeout_seconds = timeout_seconds, .done_type = CALHOST_REC_DEV_DONE};
  isolate_child_outcome oc;
  isolate_run(&io, list_child, &j, list_record, &j, &oc);
  if (j.bad) {
    snprintf(why, cap, "%s", j.failed);
  } else if (oc.end != CALHOST_CHILD_OK) {
    snprintf(why, cap, "%s: %s", j.created ? "listing devices" : "create", oc.message);
  } else {
    return 0;
  }
  runtime_device_list_free(out);
  return -1;
}

int runtime_devices_list_isolated(const config_settings *cfg, loader_plugin *p,
                                  double timeout_seconds, runtime_device_list *out, char *why,
                                  size_t cap) {
  memset(out, 0, sizeof *out);
  if (!runtime_devices_supported(p))
    return 0;
  return list_isolated(cfg, p, timeout_seconds, 0, out, why, cap);
}

int runtime_settings_check_isolated(const config_settings *cfg, loader_plugin *p,
                                    double timeout_seconds, char *why, size_t cap) {
  runtime_device_list l;
  const config_plugin_section *sec = config_plugin_named(cfg, p->backend);
  int rc = list_isolated(cfg, p, timeout_seconds, 1, &l, why, cap);
  /* a backend without devices ignores the key, as calibrate does */
  for (size_t k = 0; rc == 0 && sec && runtime_devices_supported(p) && k < sec->device_count; k++) {
    char m[800];
    if (!runtime_devices_find(&l, sec->devices[k], m, sizeof m)) {
      base_str_fail(why, cap, "devices: %s", m);
      rc = RUNTIME_SETTINGS_NO_DEVICE;
    }
  }
  runtime_device_list_free(&l);
  return rc;
}

/* ---- choosing --------------------------------------------------------- */

const runtime_device *runtime_devices_find(const runtime_device_list *l, const char *spec,
                                           char *why, size_t cap) {
  uint32_t index;
  if (spec && config_value_device_index(spec, &index)) {
    for (size_t i = 0; i < l->count; i++)
      if (l->items[i].index == index)
        return &l->items[i];
    snprintf(why, cap, "no device %u (the backend has %zu device%s; see `calhost devices`)", index,
             l->count, l->count == 1 ? "" : "s");
    return NULL;
  }
  for (size_t i = 0; spec && i < l->count; i++)
    if (!strcmp(l->items[i].identity, spec))
      return &l->items[i];
  snprintf(why, cap, "no device with identity '%.600s' (see `calhost devices`)", spec ? spec : "");
  return NULL;
}

int runtime_devices_selected(const config_settings *cfg, const char *backend,
                             const runtime_device_list *l, size_t *positions, size_t *count,
                             char *why, size_t cap) {
  const config_plugin_section *sec = config_plugin_named(cfg, backend);
  *count = 0;
  if (!sec || !sec->device_count) {
    for (size_t i = 0; i < l->count; i++)
      positions[(*count)++] = i;
    return 0;
  }
  for (size_t i = 0; i < l->count; i++) {
    for (size_t k = 0; k < sec->device_count; k++) {
      if (runtime_devices_find(l, sec->devices[k], NULL, 0) == &l->items[i]) {
        positions[(*count)++] = i;
        break;
      }
    }
  }
  for (size_t k = 0; k < sec->device_count; k++) {
    char m[800];
    if (!runtime_devices_find(l, sec->devices[k], m, sizeof m)) {
      char key[300];
      snprintf(key, sizeof key, "plugin.%s.devices", backend);
      config_origin at = config_origin_of(cfg, key);
      return base_str_fail(why, cap, "[plugin %s] devices: %s%s%s%s%u%s", backend, m,
                           at.file ? " (" : "", at.file ? at.file : "", at.file ? ":" : "",
                           at.file ? at.line : 0, at.file ? ")" : "");
    }
  }
  return 0;
}

const char *runtime_device_kind_name(uint32_t kind) {
  static const char *const words[] = {[CALHOST_DEVICE_OTHER] = "other",
                                      [CALHOST_DEVICE_CPU] = "cpu",
                                      [CALHOST_DEVICE_GPU] = "gpu",
                                      [CALHOST_DEVICE_ACCELERATOR] = "accelerator"};
  return BASE_WORD(words, CALHOST_DEVICE_ACCELERATOR, kind, "other");
}

int runtime_device_on_cpu(const runtime_device *d) {
  return d->kind == CALHOST_DEVICE_CPU || (d->hardware && !strcmp(d->hardware, "cpu"));
}

int runtime_devices_share_hardware(const runtime_device *a, const runtime_device *b) {
  if (runtime_device_on_cpu(a) || runtime_device_on_cpu(b))
    return 1;
  if (!a->hardware || !*a->hardware || !b->hardware || !*b->hardware)
    return 1;
  return !strcmp(a->hardware, b->hardware);
}

size_t runtime_devices_schedule(const runtime_device *const *devices, size_t n, size_t *wave) {
  size_t waves = 0;
  for (size_t i = 0; i < n; i++) {
    size_t w = waves; /* a new wave unless one below takes it */
    if (!runtime_device_on_cpu(devices[i])) {
      for (size_t cand = 0; cand < waves && w == waves; cand++) {
        int fits = 1;
        for (size_t j = 0; j < i && fits; j++)
          if (wave[j] == cand && runtime_devices_share_hardware(devices[i], devices[j]))
            fits = 0;
        if (fits)
          w = cand;
      }
    }
    wave[i] = w;
    if (w == waves)
      waves++;
  }
  return waves;
}
