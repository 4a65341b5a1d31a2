/*
 * signals.c: the calibrate run's signals (run.h): the cancellation flag
 * that SIGINT, SIGTERM and SIGHUP set (the plugins' cancel flag, read by the
 * driver, the set-up and the race) and the signal that stopped the run.
 * Owned here so that the driver and the set-up both use it without using
 * each other.
 */
#include <signal.h>
#include <string.h>

#include "run.h"

static volatile sig_atomic_t g_cancel;
static volatile sig_atomic_t g_signal;

static void on_signal(int sig) {
  g_cancel = 1;
  g_signal = sig;
}

volatile sig_atomic_t *cal_cancel_flag(void) {
  return &g_cancel;
}

int cal_cancel_signal(void) {
  return g_cancel ? (g_signal ? (int)g_signal : SIGINT) : 0;
}

void cal_signals_catch(cal_signals *saved) {
  g_cancel = 0;
  g_signal = 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &saved->intr);
  sigaction(SIGTERM, &sa, &saved->term);
  sigaction(SIGHUP, &sa, &saved->hup);
}

void cal_signals_restore(const cal_signals *saved) {
  sigaction(SIGINT, &saved->intr, NULL);
  sigaction(SIGTERM, &saved->term, NULL);
  sigaction(SIGHUP, &saved->hup, NULL);
}
