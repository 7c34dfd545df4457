package hostenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Sched is a process group's account with the kernel's scheduler at one
// moment: for each of its threads (every thread of every process in the
// group, by thread id), the CPU time it ran and the time it waited, ready
// to run, for a CPU (the first two fields of /proc/PID/task/TID/schedstat,
// in ns); OK when at least one thread was read.
type Sched struct {
	Threads map[int]ThreadSched
	OK      bool
}

// ThreadSched is one thread's account (Sched).
type ThreadSched struct{ RunNs, WaitNs uint64 }

// ReadGroup reads the scheduler account of process group pgid. Why not a
// library: procfs (prometheus/procfs) reads a process's schedstat but not
// its threads', nor finds a group's processes; this is two directory
// scans and two short files.
func ReadGroup(pgid int) Sched {
	var s Sched
	if pgid <= 0 {
		return s
	}
	procs, err := os.ReadDir(Root)
	if err != nil {
		return s
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid <= 0 {
			continue
		}
		dir := filepath.Join(Root, p.Name())
		if g, ok := groupOf(dir); !ok || g != pgid {
			continue
		}
		tasks, err := os.ReadDir(filepath.Join(dir, "task"))
		if err != nil {
			continue // the process ended since the scan
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, "task", t.Name(), "schedstat"))
			if err != nil {
				continue
			}
			if run, wait, ok := parseSchedstat(string(b)); ok {
				if s.Threads == nil {
					s.Threads = map[int]ThreadSched{}
				}
				s.Threads[tid] = ThreadSched{RunNs: run, WaitNs: wait}
				s.OK = true
			}
		}
	}
	return s
}

// groupOf reads the process group of the process at dir from its stat
// (the fifth field; the second, the command's name in parentheses, may
// hold spaces and parentheses itself, so fields count from the last ')').
func groupOf(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0, false
	}
	text := string(b)
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(text[i+1:]) // state, ppid, pgrp, …
	if len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(f[2])
	return g, err == nil
}

// parseSchedstat reads "run_ns wait_ns timeslices".
func parseSchedstat(text string) (run, wait uint64, ok bool) {
	f := strings.Fields(text)
	if len(f) < 2 {
		return 0, 0, false
	}
	run, err1 := strconv.ParseUint(f[0], 10, 64)
	wait, err2 := strconv.ParseUint(f[1], 10, 64)
	return run, wait, err1 == nil && err2 == nil
}

// WaitShare is how long the group's threads waited for a CPU between
// before and after, as a share in % of the time they were ready to run,
// each thread's share weighted by the CPU time it ran: the threads that
// did the server's work count, a thread that woke for a moment on a busy
// machine hardly does (an HTTP thread that ran 3 ms and waited 236 ms
// beside a compute thread that ran 2.6 s). It also gives the CPUs the
// group used on average over wallNs. False when either reading is
// missing or no thread ran. A thread started between the readings counts
// from zero; one that ended is not in after and is left out.
func WaitShare(before, after Sched, wallNs int64) (pct, cpus float64, ok bool) {
	if !before.OK || !after.OK {
		return 0, 0, false
	}
	var run, weighted float64
	for tid, a := range after.Threads {
		b := before.Threads[tid]
		if a.RunNs < b.RunNs || a.WaitNs < b.WaitNs {
			continue // a thread id reused by a new thread
		}
		r, w := float64(a.RunNs-b.RunNs), float64(a.WaitNs-b.WaitNs)
		if r == 0 {
			continue
		}
		run += r
		weighted += r * w / (r + w)
	}
	if run == 0 {
		return 0, 0, false
	}
	pct = 100 * weighted / run
	if wallNs > 0 {
		cpus = run / float64(wallNs)
	}
	return pct, cpus, true
}
