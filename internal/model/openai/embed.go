package openai

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/carryon-hub/carryon/internal/model"
)

// Embed sends req to the endpoint's /embeddings as the OpenAI API defines it (input as an array of
// strings, encoding_format float, dimensions when set) and returns the vectors in the order of
// the inputs. Errors are *model.Error; a reply with the wrong count or size of vectors is one too.
func (p *Provider) Embed(ctx context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
	if len(req.Inputs) == 0 {
		return model.EmbedResponse{}, nil
	}
	params := openai.EmbeddingNewParams{
		Model:          openai.EmbeddingModel(req.Model),
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: req.Inputs},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if req.Dimensions > 0 {
		params.Dimensions = openai.Int(int64(req.Dimensions))
	}
	res, err := p.client.Embeddings.New(ctx, params)
	if err != nil {
		return model.EmbedResponse{}, mapError(ctx, err, false)
	}
	vectors := make([][]float32, len(req.Inputs))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(vectors) || vectors[d.Index] != nil {
			return model.EmbedResponse{}, &model.Error{Provider: Name, Message: fmt.Sprintf("the embeddings reply has an item at index %d for %d inputs", d.Index, len(vectors))}
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		vectors[d.Index] = v
	}
	if err := model.CheckVectors(Name, vectors, len(req.Inputs), req.Dimensions); err != nil {
		return model.EmbedResponse{}, err
	}
	return model.EmbedResponse{Vectors: vectors, Model: res.Model, InputTokens: int(res.Usage.PromptTokens)}, nil
}
