package bodycut

// FailGets makes every GET of the body of object ("bucket/key") answer
// status, as a store in an outage does (503 Slow Down, 500), until
// HealGets; the GET is counted and its Range header recorded as any.
// Stats and listings are not concerned.
func (w *Watch) FailGets(object string, status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.statuses == nil {
		w.statuses = map[string]int{}
	}
	w.statuses[object] = status
}

// HealGets makes the GETs of object's body served again.
func (w *Watch) HealGets(object string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.statuses, object)
}
