/*
 * pause: the process that holds a pod sandbox's namespaces open.
 *
 * It is PID 1 of the sandbox, so it must reap orphaned children (SIGCHLD) and exit
 * cleanly on SIGTERM/SIGINT (a PID 1 without handlers ignores those signals).
 * Build: gcc -static -O2 -o pause pause.c   (see build-images.sh)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) {
  (void)sig;
  _exit(0);
}

static void on_chld(int sig) {
  (void)sig;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-v") == 0) {
      puts("pause (shepherd kubelet-lite) 3.10");
      return 0;
    }
  }
  if (getpid() != 1) {
    fprintf(stderr, "pause: warning: not running as PID 1\n");
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_term;
  if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
    perror("pause: sigaction");
    return 1;
  }
  sa.sa_handler = on_chld;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  if (sigaction(SIGCHLD, &sa, NULL) < 0) {
    perror("pause: sigaction");
    return 2;
  }

  for (;;) {
    pause();
  }
  return 42; /* not reached */
}
