#include "core/process.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int lt_process_find(const char *name, char *out, size_t size)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && (size_t)snprintf(out, size, "%.*s/%s", (int)len, path, name) < size &&
            access(out, X_OK) == 0)
            return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

int lt_process_run(const char *const *argv, const char *dir)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "ltbench: cannot start %s: %s\n", argv[0], strerror(errno));
        return 127;
    }
    if (pid == 0) {
        if (dir == NULL || chdir(dir) == 0)
            execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "ltbench: cannot run %s%s%s: %s\n", argv[0], dir ? " in " : "",
                dir ? dir : "", strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
