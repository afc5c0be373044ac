package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// The operations of a write of long-term memory items, as the GenAI memory conventions name
// them (development status): create_memory when every item written is new, update_memory when
// one or more updated an item (a fact consolidated into a near duplicate).
const (
	OpCreateMemory = "create_memory"
	OpUpdateMemory = "update_memory"
)

// Attributes of a memory write's span: the GenAI memory conventions' store id and record
// count, and how many of the records consolidated into items already there.
const (
	attrMemoryStoreID     = attribute.Key("gen_ai.memory.store.id")
	attrMemoryRecordCount = attribute.Key("gen_ai.memory.record.count")
	attrMemoryUpdated     = attribute.Key("carryon.memory.updated_count")
)

// MemoryWrite starts the span of a write of facts learned from session sessionID into the
// caller's long-term memory namespace, named "{operation} {namespace}" once it ends, and returns
// the function that ends it with how many items the write created and updated.
func (t *Telemetry) MemoryWrite(ctx context.Context, namespace, sessionID string) (context.Context, func(created, updated int, err error)) {
	ctx, span := t.start(ctx, OpCreateMemory+" "+namespace, trace.SpanKindInternal)
	return ctx, func(created, updated int, err error) {
		if span.IsRecording() {
			op := OpCreateMemory
			if updated > 0 {
				op = OpUpdateMemory
			}
			span.SetName(op + " " + namespace)
			span.SetAttributes(semconv.GenAIOperationNameKey.String(op), semconv.GenAIProviderNameKey.String("carryon"),
				attrMemoryStoreID.String(namespace), attrMemoryRecordCount.Int(created+updated), attrMemoryUpdated.Int(updated),
				semconv.GenAIConversationID(sessionID))
			if err != nil {
				span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
				span.SetStatus(codes.Error, err.Error())
			}
		}
		span.End()
	}
}
