/** The headers every response carries: helmet's, tuned for the demo, and Vary on the page language. */
import type express from 'express';
import helmet from 'helmet';

export function mountSecurityHeaders(app: express.Express, https: boolean): void {
  app.use(
    helmet({
      contentSecurityPolicy: {
        // upgrade-insecure-requests only when the demo is served over https.
        directives: { frameAncestors: ["'none'"], ...(https ? {} : { upgradeInsecureRequests: null }) },
      },
      // HSTS means nothing over plain http (and would pin localhost to https); on only for https.
      strictTransportSecurity: https,
      xFrameOptions: { action: 'deny' },
      // Not helmet's default no-referrer: with it Chromium sends `Origin: null` on form POSTs, and the
      // kit's start route rightly refuses a null origin. same-origin still sends nothing to other sites.
      referrerPolicy: { policy: 'same-origin' },
    }),
  );
  // Every page is in the language Accept-Language asks for (English or French).
  app.use((_req, res, next) => {
    res.vary('Accept-Language');
    next();
  });
}
