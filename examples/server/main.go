package main

import (
	"encoding/json"
	"log"
	"net/http"
)

type healthResponse struct {
	Status string `json:"status"`
}

// handleHealth answers the load balancer's health probe.
func handleHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(healthResponse{Status: "ok"})
}

func main() {
	http.HandleFunc("/healthz", handleHealth)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}
