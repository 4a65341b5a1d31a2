/*
 * probe.c: probing a plugin in an isolated child (probe.h). After
 * GStreamer's plugin scanner: the child loads and negotiates and sends the
 * answer as framed records (proto.h); the parent runs it through
 * calhost_isolate_run, which reports a signal, an early exit or a hang.
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
  const calhost_services_hooks *hooks;
} probe_args;

static int probe_child(void *arg, int fd) {
  probe_args *a = arg;
  char err[1024];
  calhost_host_services svc;
  calhost_services_context ctx;
  calhost_plugin_vtable vt;
  calhost_proto_buf b = {0};
  uint32_t chosen, pmin, pmax;
  calhost_module *m = calhost_module_open(a->path, err, sizeof err);
  calhost_services_init(&svc, &ctx, a->hooks, NULL);
  if (!m) {
    char msg[1200];
    snprintf(msg, sizeof msg, "cannot load: %s", err);
    calhost_proto_begin(&b, PROBE_REC_REASON);
    calhost_proto_put_str(&b, msg);
    isolate_proto_send(fd, &b);
  } else {
    int rc = calhost_loader_negotiate(m, a->host_min, a->host_max, &svc, &vt, &chosen, &pmin, &pmax,
                                      err, sizeof err);
    calhost_proto_begin(&b, PROBE_REC_ABI);
    calhost_proto_put_u64(&b, chosen);
    calhost_proto_put_u64(&b, pmin);
    calhost_proto_put_u64(&b, pmax);
    isolate_proto_send(fd, &b);
    if (rc != 0) {
      calhost_proto_begin(&b, PROBE_REC_REASON);
      calhost_proto_put_str(&b, err);
    } else {
      size_t n = 0;
      while (vt.operators[n])
        n++;
      calhost_proto_begin(&b, PROBE_REC_IDENTITY);
      calhost_proto_put_str(&b, vt.backend_name);
      calhost_proto_put_str(&b, vt.implementation_version);
      calhost_proto_put_str(&b, vt.description);
      calhost_proto_put_u64(&b, n);
      for (size_t i = 0; i < n; i++)
        calhost_proto_put_str(&b, vt.operators[i]);
    }
    isolate_proto_send(fd, &b);
  }
  calhost_proto_begin(&b, PROBE_REC_DONE);
  isolate_proto_send(fd, &b);
  calhost_proto_buf_free(&b);
  return 0;
}

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

static void on_record(void *user, const calhost_proto_msg *msg) {
  calhost_probe_result *r = user;
  calhost_proto_cursor c;
  calhost_proto_cursor_init(&c, msg);
  switch (msg->type) {
  case PROBE_REC_ABI:
    r->chosen = (uint32_t)calhost_proto_get_u64(&c);
    r->plugin_min = (uint32_t)calhost_proto_get_u64(&c);
    r->plugin_max = (uint32_t)calhost_proto_get_u64(&c);
    break;
  case PROBE_REC_REASON:
    copy(r->reason, sizeof r->reason, calhost_proto_get_str(&c));
    break;
  case PROBE_REC_IDENTITY: {
    copy(r->backend, sizeof r->backend, calhost_proto_get_str(&c));
    copy(r->implementation_version, sizeof r->implementation_version, calhost_proto_get_str(&c));
    copy(r->description, sizeof r->description, calhost_proto_get_str(&c));
    uint64_t n = calhost_proto_get_u64(&c);
    if (c.failed || n > 256)
      break;
    r->operators = calloc(n ? n : 1, sizeof *r->operators);
    for (uint64_t i = 0; r->operators && i < n; i++) {
      char *op = calhost_proto_dup_str(&c);
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

void calhost_probe(const char *path, uint32_t host_min, uint32_t host_max, double timeout_seconds,
                   const calhost_services_hooks *hooks, calhost_probe_result *r) {
  probe_args a = {path, host_min, host_max, hooks};
  calhost_isolate_options io = {.timeout_seconds = timeout_seconds > 0 ? timeout_seconds : 10,
                                .done_type = PROBE_REC_DONE};
  calhost_child_outcome oc;
  memset(r, 0, sizeof *r);
  calhost_isolate_run(&io, probe_child, &a, on_record, r, &oc);
  if (oc.end != CALHOST_CHILD_OK) {
    r->ok = 0;
    snprintf(r->reason, sizeof r->reason, "%s during negotiation", oc.message);
  } else if (!r->ok && !r->reason[0]) {
    snprintf(r->reason, sizeof r->reason, "the probe ended without an answer");
  }
}

void calhost_probe_result_free(calhost_probe_result *r) {
  for (size_t i = 0; i < r->operator_count; i++)
    free(r->operators[i]);
  free(r->operators);
  r->operators = NULL;
  r->operator_count = 0;
}
