package runs

import "testing"

// TestBrokerProgressLetsStatusWaitersSleep: a step's write (progress) wakes a run's followers and
// not the waiters of its status (Wait), which a change of status (local, as a run's end calls it)
// wakes; another run's change wakes neither. (Before, Wait read the run again after every one of
// its writes.)
func TestBrokerProgressLetsStatusWaitersSleep(t *testing.T) {
	b := newBroker(nil)
	follower, unsubF := b.subscribe("run_a")
	defer unsubF()
	waiter, unsubW := b.subscribeStatus("run_a")
	defer unsubW()
	woken := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	b.progress("run_b")
	b.local("run_b")
	if woken(follower) || woken(waiter) {
		t.Fatal("another run's change woke run_a's subscribers")
	}
	b.progress("run_a")
	if !woken(follower) {
		t.Error("progress did not wake the follower")
	}
	if woken(waiter) {
		t.Error("progress woke the status waiter")
	}
	b.local("run_a")
	if !woken(follower) || !woken(waiter) {
		t.Error("a change of status did not wake both")
	}
}
