/*
 * probe.c: probing a plugin in an isolated child (probe.h). After
 * GStreamer's plugin scanner: the child loads and negotiates and sends the
 * answer as the codec's PROBE_* records (isolate/codec.h); the parent runs it through
 * isolate_run, which reports a signal, an early exit or a hang.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isolate/isolate.h"
#include "isolate/codec.h"
#include "module.h"
#include "probe.h"

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
    isolate_rec_put_probe_reason(&b, msg);
    isolate_proto_send(fd, &b);
  } else {
    int rc = loader_negotiate(m, a->host_min, a->host_max, &svc, &vt, &chosen, &pmin, &pmax, err,
                              sizeof err);
    isolate_rec_put_probe_abi(&b, chosen, pmin, pmax);
    isolate_proto_send(fd, &b);
    if (rc != 0)
      isolate_rec_put_probe_reason(&b, err);
    else
      isolate_rec_put_probe_identity(&b, vt.backend_name, vt.implementation_version, vt.description,
                                     vt.operators);
    isolate_proto_send(fd, &b);
  }
  isolate_rec_put_empty(&b, CALHOST_REC_PROBE_DONE);
  isolate_proto_send(fd, &b);
  isolate_proto_buf_free(&b);
  return 0;
}

static void copy(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

static void on_record(void *user, const isolate_proto_msg *msg) {
  loader_probe_result *r = user;
  const char *reason, *backend, *implementation, *description;
  switch (msg->type) {
  case CALHOST_REC_PROBE_ABI:
    isolate_rec_get_probe_abi(msg, &r->chosen, &r->plugin_min, &r->plugin_max);
    break;
  case CALHOST_REC_PROBE_REASON:
    isolate_rec_get_probe_reason(msg, &reason);
    copy(r->reason, sizeof r->reason, reason);
    break;
  case CALHOST_REC_PROBE_IDENTITY:
    /* the child is plugin code: a second identity is a protocol error,
     * never a second list written over the first */
    if (r->operators) {
      r->ok = 0;
      copy(r->reason, sizeof r->reason,
           "the probe's record stream held a second identity (plugin code wrote to it)");
      break;
    }
    if (isolate_rec_get_probe_identity(msg, &backend, &implementation, &description, &r->operators,
                                       &r->operator_count) != 0)
      break;
    copy(r->backend, sizeof r->backend, backend);
    copy(r->implementation_version, sizeof r->implementation_version, implementation);
    copy(r->description, sizeof r->description, description);
    r->ok = r->operator_count > 0;
    break;
  default:
    break;
  }
}

void loader_probe(const char *path, uint32_t host_min, uint32_t host_max, double timeout_seconds,
                  const loader_services_hooks *hooks, loader_probe_result *r) {
  probe_args a = {path, host_min, host_max, hooks};
  isolate_options io = {.timeout_seconds = timeout_seconds > 0 ? timeout_seconds : 10,
                        .done_type = CALHOST_REC_PROBE_DONE};
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
