// SPDX-License-Identifier: BSD-2-Clause
/*
 * pyembed - an interpreter loaded after the process was first sampled, as
 * an application embedding Python does it (tests/e2e/python_dlopen.sh):
 * SECS_C seconds of CPU time in C, then a thread named "pyphase" loads
 * LIB (libpython3.X.so) with dlopen() and runs pyhot() for SECS_PY
 * seconds of its CPU time.
 *
 *   pyembed LIB SECS_C SECS_PY
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static const char *lib;
static double secs_py;

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void c_spin(double secs)
{
	volatile unsigned long x = 0;
	double end = cpu_s() + secs;

	while (cpu_s() < end)
		x++;
}

static void *py_phase(void *arg)
{
	void (*init)(void);
	int (*run)(const char *);
	char code[512];
	void *h;

	(void)arg;
	prctl(PR_SET_NAME, "pyphase");
	h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "pyembed: %s\n", dlerror());
		exit(1);
	}
	init = (void (*)(void))dlsym(h, "Py_Initialize");
	run = (int (*)(const char *))dlsym(h, "PyRun_SimpleString");
	if (!init || !run) {
		fprintf(stderr, "pyembed: %s: no Py_Initialize or PyRun_SimpleString\n", lib);
		exit(1);
	}
	init();
	snprintf(code, sizeof(code),
		 "import time\n"
		 "def pyhot():\n"
		 "    end = time.thread_time() + %f\n"
		 "    x = 0\n"
		 "    while time.thread_time() < end:\n"
		 "        x += 1\n"
		 "pyhot()\n", secs_py);
	if (run(code) != 0)
		exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 4) {
		fprintf(stderr, "usage: pyembed LIB SECS_C SECS_PY\n");
		return 2;
	}
	lib = argv[1];
	secs_py = atof(argv[3]);
	c_spin(atof(argv[2]));
	if (pthread_create(&t, NULL, py_phase, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}
