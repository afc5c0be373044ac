package runs

// SetFollowBuffer sets how many events the followers of s keep for their streams.
func SetFollowBuffer(s *Service, n int64) { s.follows.buffer = n }

// Followers is how many runs s follows for streams now.
func Followers(s *Service) int {
	s.follows.mu.Lock()
	defer s.follows.mu.Unlock()
	return len(s.follows.m)
}

// Working says whether a Work loop of s runs.
func Working(s *Service) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.work != nil
}
