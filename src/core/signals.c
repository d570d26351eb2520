#include "core/signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t received;

static void on_signal(int sig)
{
    if (received) {
        /* second request: stop now, the default way */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    received = sig;
}

static void install(int sig)
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
        return; /* inherited "ignore": leave it */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void lt_signals_install(void)
{
    install(SIGINT);
    install(SIGTERM);
}

int lt_interrupted(void) { return received; }

int lt_interrupt_exit_code(void) { return 128 + received; }
