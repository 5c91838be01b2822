// Package restcatalog is an Iceberg REST catalog server for tests: the
// endpoints iceberg-go's REST client calls for cdcetl's loads (config,
// namespaces, tables, commits), served over a catalog of iceberg-go's own
// (the SQL catalog), so a load through --catalog rest+http://... crosses
// the REST protocol for real. Single-level namespaces only.
package restcatalog

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/cdcetl/cdcetl/internal/lazysubstrait"
)

// Handler serves the REST protocol (under /v1) over cat.
type Handler struct {
	Cat catalog.Catalog
	// Commits counts the commit requests served, Conflicts those refused
	// for a failed requirement.
	Commits, Conflicts atomic.Int64
}

type ident struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

type loadTable struct {
	MetadataLoc string             `json:"metadata-location"`
	Metadata    table.Metadata     `json:"metadata"`
	Config      iceberg.Properties `json:"config"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if v != nil {
		json.NewEncoder(w).Encode(v)
	}
}

func fail(w http.ResponseWriter, code int, typ string, err error) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": err.Error(), "type": typ, "code": code}})
}

// status maps a catalog error to its REST status.
func status(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		fail(w, http.StatusNotFound, "NoSuchTableException", err)
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		fail(w, http.StatusNotFound, "NoSuchNamespaceException", err)
	case errors.Is(err, catalog.ErrTableAlreadyExists):
		fail(w, http.StatusConflict, "AlreadyExistsException", err)
	case errors.Is(err, catalog.ErrNamespaceAlreadyExists):
		fail(w, http.StatusConflict, "AlreadyExistsException", err)
	case errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed"):
		fail(w, http.StatusConflict, "CommitFailedException", err)
	default:
		fail(w, http.StatusInternalServerError, "ServerError", err)
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := lazysubstrait.Ensure(); err != nil {
		fail(w, http.StatusInternalServerError, "ServerError", err)
		return
	}
	ctx := r.Context()
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/v1/")
	var parts []string
	for _, p := range strings.Split(path, "/") {
		u, err := url.PathUnescape(p)
		if err != nil {
			fail(w, http.StatusBadRequest, "BadRequestException", err)
			return
		}
		parts = append(parts, u)
	}
	ns := func(s string) table.Identifier { return strings.Split(s, "\x1f") }
	switch {
	case len(parts) == 1 && parts[0] == "config":
		writeJSON(w, http.StatusOK, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}})
	case len(parts) == 1 && parts[0] == "namespaces" && r.Method == http.MethodGet:
		list, err := h.Cat.ListNamespaces(ctx, nil)
		if err != nil {
			status(w, err)
			return
		}
		if list == nil {
			list = []table.Identifier{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"namespaces": list})
	case len(parts) == 1 && parts[0] == "namespaces" && r.Method == http.MethodPost:
		var req struct {
			Namespace  []string           `json:"namespace"`
			Properties iceberg.Properties `json:"properties"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fail(w, http.StatusBadRequest, "BadRequestException", err)
			return
		}
		if err := h.Cat.CreateNamespace(ctx, req.Namespace, req.Properties); err != nil {
			status(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"namespace": req.Namespace, "properties": map[string]string{}})
	case len(parts) == 2 && parts[0] == "namespaces":
		exists, err := h.Cat.CheckNamespaceExists(ctx, ns(parts[1]))
		if err != nil {
			status(w, err)
			return
		}
		if !exists {
			status(w, catalog.ErrNoSuchNamespace)
			return
		}
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		props, err := h.Cat.LoadNamespaceProperties(ctx, ns(parts[1]))
		if err != nil {
			status(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"namespace": ns(parts[1]), "properties": props})
	case len(parts) == 3 && parts[0] == "namespaces" && parts[2] == "tables" && r.Method == http.MethodGet:
		ids := []ident{}
		for id, err := range h.Cat.ListTables(ctx, ns(parts[1])) {
			if err != nil {
				status(w, err)
				return
			}
			ids = append(ids, ident{Namespace: catalog.NamespaceFromIdent(id), Name: catalog.TableNameFromIdent(id)})
		}
		writeJSON(w, http.StatusOK, map[string]any{"identifiers": ids})
	case len(parts) == 3 && parts[0] == "namespaces" && parts[2] == "tables" && r.Method == http.MethodPost:
		h.create(ctx, w, r, ns(parts[1]))
	case len(parts) == 4 && parts[0] == "namespaces" && parts[2] == "tables":
		id := append(ns(parts[1]), parts[3])
		switch r.Method {
		case http.MethodHead:
			ok, err := h.Cat.CheckTableExists(ctx, id)
			if err != nil {
				status(w, err)
			} else if !ok {
				w.WriteHeader(http.StatusNotFound)
			} else {
				w.WriteHeader(http.StatusNoContent)
			}
		case http.MethodGet:
			tbl, err := h.Cat.LoadTable(ctx, id)
			if err != nil {
				status(w, err)
				return
			}
			writeJSON(w, http.StatusOK, loadTable{MetadataLoc: tbl.MetadataLocation(), Metadata: tbl.Metadata(), Config: iceberg.Properties{}})
		case http.MethodPost:
			h.commit(ctx, w, r, id)
		default:
			fail(w, http.StatusMethodNotAllowed, "BadRequestException", errors.New(r.Method))
		}
	default:
		fail(w, http.StatusNotFound, "NotFoundException", errors.New("no route "+r.Method+" "+r.URL.Path))
	}
}

func (h *Handler) create(ctx context.Context, w http.ResponseWriter, r *http.Request, ns table.Identifier) {
	var req struct {
		Name          string                 `json:"name"`
		Schema        *iceberg.Schema        `json:"schema"`
		Location      string                 `json:"location"`
		PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
		WriteOrder    *table.SortOrder       `json:"write-order"`
		Props         iceberg.Properties     `json:"properties"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	opts := []catalog.CreateTableOpt{catalog.WithProperties(req.Props)}
	if req.Location != "" {
		opts = append(opts, catalog.WithLocation(req.Location))
	}
	if req.PartitionSpec != nil {
		opts = append(opts, catalog.WithPartitionSpec(req.PartitionSpec))
	}
	if req.WriteOrder != nil {
		opts = append(opts, catalog.WithSortOrder(*req.WriteOrder))
	}
	tbl, err := h.Cat.CreateTable(ctx, append(ns, req.Name), req.Schema, opts...)
	if err != nil {
		status(w, err)
		return
	}
	writeJSON(w, http.StatusOK, loadTable{MetadataLoc: tbl.MetadataLocation(), Metadata: tbl.Metadata(), Config: iceberg.Properties{}})
}

func (h *Handler) commit(ctx context.Context, w http.ResponseWriter, r *http.Request, id table.Identifier) {
	var req struct {
		Requirements table.Requirements `json:"requirements"`
		Updates      table.Updates      `json:"updates"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	h.Commits.Add(1)
	meta, loc, err := h.Cat.CommitTable(ctx, id, req.Requirements, req.Updates)
	if err != nil {
		if errors.Is(err, table.ErrCommitFailed) || strings.Contains(err.Error(), "requirement failed") {
			h.Conflicts.Add(1)
		}
		status(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata-location": loc, "metadata": meta})
}
