/**
 * OpenAPI at `/docs`, generated from the controllers (DESIGN §7, §10): the Swagger UI for a browser, the
 * document itself for a program (any client that does not prefer HTML: curl, fetch), and always the
 * JSON at `/docs-json` (YAML at `/docs-yaml`).
 */
import { readFileSync } from 'node:fs';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';

function packageVersion(): string {
  try {
    // dist/server/api/ and src/server/api/ both sit three folders below the package root.
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Call before `listen`: the document is built from every controller the app has. */
export function setupOpenApi(app: NestExpressApplication): void {
  const config = new DocumentBuilder()
    .setTitle('nest-agent-hooks')
    .setDescription('Run agents whose lifecycle is observed and controlled by hooks. Errors are { error: { code, message } }.')
    .setVersion(packageVersion())
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key of AGENT_HOOKS_API_KEYS (not needed when the server runs without keys, on loopback)' })
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // Registered before the UI's own route, so it sees `/docs` first.
  app.use('/docs', (request: Request, response: Response, next: NextFunction) => {
    if (request.method === 'GET' && request.path === '/' && request.accepts(['json', 'html']) === 'json') {
      response.json(document);
      return;
    }
    next();
  });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
}
