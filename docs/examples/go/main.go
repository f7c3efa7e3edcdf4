// Send, receive and ack one message with mq, using only Go's standard library.
//
//	MQ_URL=http://127.0.0.1:8080/v1 MQ_KEY=<key> go run . [queue]
//
// The queue is created when it does not exist. Exits non-zero, with the server's error kind and
// message, on any answer the API does not promise here.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// apiError is an error answer: its status and the kind from the JSON body.
type apiError struct {
	Status  int
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Kind, e.Message) }

type client struct {
	base, key, spool string
	http             *http.Client
}

// call sends one request and returns the response and its body; 4xx and 5xx are *apiError.
func (c *client) call(method, path string, body []byte, headers map[string]string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	for name, value := range headers {
		req.Header.Set(name, value)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode >= 400 {
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil {
			e.Message = string(data)
		}
		return nil, nil, e
	}
	return resp, data, nil
}

func (c *client) ensureQueue(queue string) error {
	settings := []byte(`{"maxRetries": 3}`)
	json := map[string]string{"Content-Type": "application/json"}
	_, _, err := c.call("PUT", "/spools/"+c.spool+"/queues/"+queue, settings, json)
	if e, ok := err.(*apiError); ok && e.Kind == "queue_exists" {
		return nil
	}
	return err
}

func run(c *client, queue string) error {
	if err := c.ensureQueue(queue); err != nil {
		return err
	}
	octets := map[string]string{"Content-Type": "application/octet-stream"}
	q := "/spools/" + c.spool + "/queues/" + queue
	resp, _, err := c.call("POST", q+"/send", []byte("hello from go"), octets)
	if err != nil {
		return err
	}
	fmt.Printf("sent %s (%d)\n", resp.Header.Get("Svc-Message-Id"), resp.StatusCode)

	resp, payload, err := c.call("POST", q+"/recv?waitSeconds=5", nil, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusNoContent {
		return fmt.Errorf("nothing to receive")
	}
	id := resp.Header.Get("Svc-Message-Id")
	fmt.Printf("received %s: %s (retries %s)\n", id, payload, resp.Header.Get("Svc-Message-Retries"))

	// The work would happen here; on failure, POST .../nack (retry) or .../fail instead.
	lease := map[string]string{"Svc-Lease": resp.Header.Get("Svc-Lease")}
	if _, _, err := c.call("POST", "/spools/"+c.spool+"/ack", nil, lease); err != nil {
		return err
	}
	fmt.Printf("acked %s\n", id)
	return nil
}

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

func main() {
	c := &client{
		base:  strings.TrimRight(env("MQ_URL", "http://127.0.0.1:8080/v1"), "/"),
		key:   os.Getenv("MQ_KEY"),
		spool: env("MQ_SPOOL", "default"),
		http:  &http.Client{Timeout: 30 * time.Second},
	}
	queue := "examples"
	if len(os.Args) > 1 {
		queue = os.Args[1]
	}
	if err := run(c, queue); err != nil {
		fmt.Fprintln(os.Stderr, "mq:", err)
		os.Exit(1)
	}
}
