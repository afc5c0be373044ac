-- The front door a run was started through (carryon.Run.Door: api, openai, mcp, ag-ui, ai-sdk,
-- a2a, schedule, library); '' for the runs stored before it was kept.
ALTER TABLE runs ADD COLUMN door TEXT NOT NULL DEFAULT '';
