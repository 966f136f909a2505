package ghapi

import (
	"context"
	"strconv"
	"time"
)

// IssueEvent is one entry of an issue's timeline of events (labeled, unlabeled, closed, …).
type IssueEvent struct {
	Event     string    `json:"event"`
	Actor     *User     `json:"actor"`
	CreatedAt time.Time `json:"created_at"`
	Label     *Label    `json:"label,omitempty"`
}

// IssueEvents lists the events of issue n, oldest first.
func (c *Client) IssueEvents(ctx context.Context, n int) ([]IssueEvent, error) {
	return list[IssueEvent](ctx, c, c.repoPath("issues", strconv.Itoa(n), "events")+"?per_page=100")
}

// LabeledBy returns who last added label to issue n ("" when no event says so).
func (c *Client) LabeledBy(ctx context.Context, n int, label string) (string, error) {
	events, err := c.IssueEvents(ctx, n)
	if err != nil {
		return "", err
	}
	who := ""
	for _, ev := range events {
		if ev.Event == "labeled" && ev.Label != nil && ev.Label.Name == label && ev.Actor != nil {
			who = ev.Actor.Login
		}
	}
	return who, nil
}
