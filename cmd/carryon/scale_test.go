package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAppendRateInstances measures appends per second through 1, 2 and 3 server instances over
// one PostgreSQL database each (docs/SCALING.md and docs/BENCHMARKS.md quote it). It runs only
// when CARRYON_MEASURE_APPENDS holds a duration, e.g.
//
//	CARRYON_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	CARRYON_MEASURE_APPENDS=10s go test -run TestAppendRateInstances -v ./cmd/carryon
//
// CARRYON_MEASURE_CLIENTS sets the number of concurrent clients (default 48, spread evenly over
// the instances); each appends one message at a time to a session of its own.
// CARRYON_MEASURE_INSTANCES limits the runs to one instance count (1, 2 or 3).
func TestAppendRateInstances(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("CARRYON_MEASURE_APPENDS"))
	if err != nil {
		t.Skip("set CARRYON_MEASURE_APPENDS to a duration (e.g. 10s) to measure the append rate")
	}
	clients := 48
	if n := os.Getenv("CARRYON_MEASURE_CLIENTS"); n != "" {
		fmt.Sscan(n, &clients)
	}
	counts := []int{1, 2, 3}
	if n := os.Getenv("CARRYON_MEASURE_INSTANCES"); n != "" {
		var one int
		fmt.Sscan(n, &one)
		counts = []int{one}
	}
	rates := map[int]float64{}
	for _, n := range counts {
		t.Run(fmt.Sprintf("instances=%d", n), func(t *testing.T) {
			rate, p50, p99 := appendRate(t, n, clients, d)
			rates[n] = rate
			t.Logf("%d instance(s), %d clients, %s: %.0f appends/s; latency p50 %s, p99 %s", n, clients, d, rate, p50, p99)
		})
	}
	if one := rates[1]; one > 0 {
		for _, n := range counts {
			t.Logf("%d instance(s): %.2f × the rate of one", n, rates[n]/one)
		}
	}
}

// appendRate starts n API-only instances on a new database and has clients append for d, one
// message at a time each, to a session of its own, the clients spread evenly over the instances.
func appendRate(t *testing.T, n, clients int, d time.Duration) (rate float64, p50, p99 time.Duration) {
	args := make([][]string, n)
	for i := range args {
		args[i] = []string{"--workers", "0"}
	}
	c := startCluster(t, n, nil, args...)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	post := func(url, body string) (int, []byte) {
		req, _ := http.NewRequest("POST", url, bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+c.key)
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	sessions := make([]string, clients)
	for i := range sessions {
		status, body := post(c.srvs[i%n].url+"/v1/sessions", `{}`)
		var s struct{ ID string }
		if json.Unmarshal(body, &s); status != 201 || s.ID == "" {
			t.Fatalf("create session: %d %s", status, body)
		}
		sessions[i] = s.ID
	}
	var ok, failed atomic.Int64
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			url := c.srvs[i%n].url + "/v1/sessions/" + sessions[i] + "/messages"
			for k := 0; time.Now().Before(deadline); k++ {
				start := time.Now()
				status, _ := post(url, fmt.Sprintf(`{"messages":[{"role":"user","content":"message %d of client %d"}]}`, k, i))
				lat[i] = append(lat[i], time.Since(start))
				if status == 201 {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 || failed.Load() > 0 {
		t.Fatalf("%d appends failed of %d", failed.Load(), len(all))
	}
	return float64(ok.Load()) / d.Seconds(), all[len(all)/2].Round(10 * time.Microsecond), all[len(all)*99/100].Round(10 * time.Microsecond)
}
