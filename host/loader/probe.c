/*
 * probe.c: probing a plugin in an isolated child (probe.h). After
 * GStreamer's plugin scanner: the child loads and negotiates and sends the
 * answer as framed records (proto.h); the parent runs it through
 * isolate_run, which reports a signal, an early exit or a hang.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isolate.h"
#include "module.h"
#include "probe.h"

/* The probe's record types. */
enum {
  PROBE_REC_ABI = 1,      /* u64 chosen, u64 plugin min, u64 plugin max */
  PROBE_REC_REASON = 2,   /* str: why the plugin cannot be used */
  PROBE_REC_IDENTITY = 3, /* str backend, str implementation, str description, u64 n, n str */
  PROBE_REC_DONE = 4,
};

typedef struct probe_args {
  const char *path;
  uint32_t host_min, host_max;
  const loader_services_hooks *hooks;
} probe_args;

static int probe_child(void *arg, int fd) {
  probe_args *a = arg;
  char err[1024];
  calhost_host_services svc;
  loader_services_context ctx;
  calhost_plugin_vtable vt;
  isolate_proto_buf b = {0};
  uint32_t chosen, pmin, pmax;
  loader_module *m = loader_module_open(a->path, err, sizeof err);
  loader_services_init(&svc, &ctx, a->hooks, NULL);
  if (!m) {
    char msg[1200];
    snprintf(msg, sizeof msg, "cannot load: %s", err);
    isolate_proto_begin(&b, PROBE_REC_REASON);
    isolate_proto_put_str(&b, msg);
    isolate_proto_send(fd, &b);
  } else {
    int rc = loader_negotiate(m, a->host_min, a->host_max, &svc, &vt, &chosen, &pmin, &pmax, err,
                              sizeof err);
    isolate_proto_begin(&b, PROBE_REC_ABI);
    isolate_proto_put_u64(&b, chosen);
    isolate_proto_put_u64(&b, pmin);
    isolate_proto_put_u64(&b, pmax);
    isolate_proto_send(fd, &b);
    if (rc != 0) {
      isolate_proto_begin(&b, PROBE_REC_REASON);
      isolate_proto_put_str(&b, err);
    } else {
      size_t n = 0;
      while (vt.operators[n])
        n++;
      isolate_proto_begin(&b, PROBE_REC_IDENTITY);
      isolate_proto_put_str(&b, vt.backend_name);
      isolate_proto_put_str(&b, vt.implementation_version);
      isolate_proto_put_str(&b, vt.description);
      isolate_proto_put_u64(&b, n);
      for (size_t i = 0; i < n; i++)
        isolate_proto_put_str(&b, vt.operators[i]);
    }
    isolate_proto_send(fd, &b);
  }
  isolate_proto_begin(&b, PROBE_REC_DONE);
  isolate_proto_send(fd, &b);
  isolate_proto_buf_free(&b);
  return 0;
}

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

static void on_record(void *user, const isolate_proto_msg *msg) {
  loader_probe_result *r = user;
  isolate_proto_cursor c;
  isolate_proto_cursor_init(&c, msg);
  switch (msg->type) {
  case PROBE_REC_ABI:
    r->chosen = (uint32_t)isolate_proto_get_u64(&c);
    r->plugin_min = (uint32_t)isolate_proto_get_u64(&c);
    r->plugin_max = (uint32_t)isolate_proto_get_u64(&c);
    break;
  case PROBE_REC_REASON:
    copy(r->reason, sizeof r->reason, isolate_proto_get_str(&c));
    break;
  case PROBE_REC_IDENTITY: {
    /* the child is plugin code: a second identity is a protocol error,
     * never a second list written over the first */
    if (r->operators) {
      r->ok = 0;
      copy(r->reason, sizeof r->reason,
           "the probe's record stream held a second identity (plugin code wrote to it)");
      break;
    }
    copy(r->backend, sizeof r->backend, isolate_proto_get_str(&c));
    copy(r->implementation_version, sizeof r->implementation_version, isolate_proto_get_str(&c));
    copy(r->description, sizeof r->description, isolate_proto_get_str(&c));
    uint64_t n = isolate_proto_get_u64(&c);
    if (c.failed || n > 256)
      break;
    r->operators = calloc(n ? n : 1, sizeof *r->operators);
    for (uint64_t i = 0; r->operators && i < n; i++) {
      char *op = isolate_proto_dup_str(&c);
      if (!op)
        break;
      r->operators[r->operator_count++] = op;
    }
    r->ok = !c.failed && r->operator_count == n && r->operator_count > 0;
    break;
  }
  default:
    break;
  }
}

void loader_probe(const char *path, uint32_t host_min, uint32_t host_max, double timeout_seconds,
                  const loader_services_hooks *hooks, loader_probe_result *r) {
  probe_args a = {path, host_min, host_max, hooks};
  isolate_options io = {.timeout_seconds = timeout_seconds > 0 ? timeout_seconds : 10,
                        .done_type = PROBE_REC_DONE};
  isolate_child_outcome oc;
  memset(r, 0, sizeof *r);
  isolate_run(&io, probe_child, &a, on_record, r, &oc);
  if (oc.end != CALHOST_CHILD_OK) {
    r->ok = 0;
    snprintf(r->reason, sizeof r->reason, "%s during negotiation", oc.message);
  } else if (!r->ok && !r->reason[0]) {
    snprintf(r->reason, sizeof r->reason, "the probe ended without an answer");
  }
}

void loader_probe_result_free(loader_probe_result *r) {
  for (size_t i = 0; i < r->operator_count; i++)
    free(r->operators[i]);
  free(r->operators);
  r->operators = NULL;
  r->operator_count = 0;
}
